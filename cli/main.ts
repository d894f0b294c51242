import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Message, Session } from "./api-types.ts";
import { Chat } from "./chat.ts";
import { gatewayCommand } from "./gateway/command.ts";
import { runHandoff } from "./handoff.ts";
import { ApiClient, CliError, resolveTarget } from "./client.ts";
import { processIo, println, styleFor, type CliIo, type Style } from "./io.ts";
import { runLocal } from "./local.ts";
import { formatSessionList, formatTranscript, resolveSession } from "./sessions.ts";
import { runSetup, SETUP_USAGE } from "./setup.ts";

export const CLI_VERSION = "0.1.0";

const MAIN_HELP = `hermes-edge ${CLI_VERSION}: talk to your agent on a hermes-edge Worker

Usage: hermes-edge <command> [options]

Commands:
  chat                      interactive chat (a terminal, or lines piped on stdin)
  sessions list|show|messages|handoff   sessions, transcripts, headless handoff (--json)
  setup telegram|discord|slack   point a platform at the Worker (webhook, commands, manifest)
  start                     local Worker + chat (what \`npm start\` runs)
  dev                       local Worker only (what \`npm run dev\` runs)
  gateway                   relay gateway: serve platform messages through a Worker, no public IP

Options:
  -h, --help                help for hermes-edge or a command
  -v, --version             print the version

Environment:
  HERMES_EDGE_URL           the Worker (default http://127.0.0.1:8787)
  HERMES_EDGE_TOKEN         its API_TOKEN (locally read from ./.dev.vars when unset)
  NO_COLOR                  no colours (also off when output is not a terminal)

Run \`hermes-edge <command> --help\` for a command's options.`;

const CHAT_USAGE = `Usage: hermes-edge chat [--resume <id|title|latest>]

Interactive chat with the agent. Replies stream as they arrive; Ctrl-C stops a
running reply, Ctrl-C at the prompt or /quit leaves. With stdin piped, each line
is one message and the chat ends at end of input.

Options:
  -r, --resume <ref>   continue a session: its id, its title, or "latest"
  -h, --help           this help

In the chat: /new, /sessions, /resume [n|id|title], /help, /quit`;

const SESSIONS_USAGE = `Usage: hermes-edge sessions <list|show|messages|handoff> [options]

  list [--limit N] [--json]            recent sessions, newest first
  show <id|title|latest> [--json]      one session and its transcript
  messages <id|title|latest> [--json]  the transcript only
  handoff <id|title|latest> --to <platform>[:<chat_id>] [--no-thread] [--no-wait] [--json]
                                       move a session to a platform's home channel (or that
                                       chat); waits for the result and exits 0 only when it
                                       completed (--no-wait: once it is queued)

--json prints the object the matching API route returns.`;

const LOCAL_USAGE = (what: string) => `Usage: hermes-edge ${what} [--port N]

${what === "start" ? "Applies local D1 migrations, makes sure .dev.vars has an API_TOKEN, starts the\nWorker locally (wrangler dev), waits for it, and opens the chat. Leaving the chat\nstops the Worker." : "Applies local D1 migrations, makes sure .dev.vars has an API_TOKEN, and runs the\nWorker locally (wrangler dev) in the foreground."}

Options:
  --port N     port for the local Worker (default 8787)
  -h, --help   this help`;

type Options = NonNullable<ParseArgsConfig["options"]>;

interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

function parse(args: string[], options: Options, usage: string): Parsed {
  try {
    const { values, positionals } = parseArgs({ args, options: { help: { type: "boolean", short: "h" }, ...options }, allowPositionals: true, strict: true });
    return { values: values as Parsed["values"], positionals };
  } catch (err) {
    throw new CliError(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`, 2);
  }
}

function str(v: string | boolean | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** The CLI, testable in-process: `await createCli(argv, io).run()` gives the exit code. */
export function createCli(argv: string[], io: CliIo = processIo()) {
  const out = (s = "") => println(io.stdout, s);
  const style: Style = styleFor(io.stdout, io.env);
  const client = () => new ApiClient(resolveTarget(io.env, io.cwd), io.fetch);

  const commands: Record<string, (args: string[]) => Promise<number>> = {
    async chat(args) {
      const { values, positionals } = parse(args, { resume: { type: "string", short: "r" } }, CHAT_USAGE);
      if (values.help) return out(CHAT_USAGE), 0;
      if (positionals.length > 0) throw new CliError(`chat takes no arguments (got '${positionals.join(" ")}')\n\n${CHAT_USAGE}`, 2);
      return new Chat({ client: client(), io, style }).run(str(values.resume));
    },

    async sessions(args) {
      const { values, positionals } = parse(
        args,
        { json: { type: "boolean" }, limit: { type: "string" }, to: { type: "string" }, "no-thread": { type: "boolean" }, "no-wait": { type: "boolean" } },
        SESSIONS_USAGE,
      );
      const [sub, ref, ...extra] = positionals;
      if (values.help || !sub) return out(SESSIONS_USAGE), values.help ? 0 : 2;
      if (extra.length > 0) throw new CliError(`unexpected arguments: ${extra.join(" ")}\n\n${SESSIONS_USAGE}`, 2);
      const api = client();
      if (sub === "list") {
        const limit = values.limit === undefined ? 50 : Number(str(values.limit));
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new CliError("--limit must be a whole number from 1 to 200", 2);
        const body = await api.json<{ sessions: Session[] }>("GET", `/v1/sessions?limit=${limit}`);
        if (values.json) return out(JSON.stringify(body)), 0;
        for (const l of formatSessionList(body.sessions, io.now(), style)) out(l);
        return 0;
      }
      if (sub === "show" || sub === "messages") {
        if (!ref) throw new CliError(`sessions ${sub} needs a session id, title or "latest"\n\n${SESSIONS_USAGE}`, 2);
        const s = await resolveSession(api, ref);
        const path = `/v1/sessions/${encodeURIComponent(s.id)}`;
        if (sub === "show" && values.json) return out(JSON.stringify(await api.json("GET", path))), 0;
        const body = await api.json<{ messages: Message[] }>("GET", `${path}/messages`);
        if (values.json) return out(JSON.stringify(body)), 0;
        if (sub === "show") {
          out(`${style.bold(s.title ?? "(untitled)")}  ${style.cyan(s.id)}`);
          out(style.dim(`${s.source} · ${s.message_count} messages · model ${s.model ?? "?"}${s.running ? " · running" : ""}${s.handoff ? ` · handoff ${s.handoff.state}` : ""}`));
          out();
        }
        for (const l of formatTranscript(body.messages, style)) out(l);
        return 0;
      }
      if (sub === "handoff") {
        if (!ref) throw new CliError(`sessions handoff needs a session id, title or "latest"\n\n${SESSIONS_USAGE}`, 2);
        const to = str(values.to);
        if (!to) throw new CliError(`sessions handoff needs --to <platform>[:<chat_id>]\n\n${SESSIONS_USAGE}`, 2);
        const [platform = "", ...chat] = to.split(":");
        const s = await resolveSession(api, ref);
        const { outcome, handoff } = await runHandoff({
          client: api,
          io,
          style,
          session: s,
          platform: platform.toLowerCase(),
          chatId: chat.length > 0 ? chat.join(":") : undefined,
          thread: values["no-thread"] !== true,
          wait: values["no-wait"] !== true,
          progress: values.json ? io.stderr : io.stdout,
        });
        if (values.json) out(JSON.stringify(outcome === "queued" ? await api.json("GET", `/v1/sessions/${encodeURIComponent(s.id)}/handoff`) : { handoff }));
        return outcome === "completed" || outcome === "queued" ? 0 : 1;
      }
      throw new CliError(`unknown sessions command '${sub}'\n\n${SESSIONS_USAGE}`, 2);
    },

    async setup(args) {
      const { values, positionals } = parse(args, { url: { type: "string" }, json: { type: "boolean" } }, SETUP_USAGE);
      if (values.help) return out(SETUP_USAGE), 0;
      if (positionals.length > 1) throw new CliError(`setup takes one platform\n\n${SETUP_USAGE}`, 2);
      return runSetup(positionals[0], { io, style, url: str(values.url), json: values.json === true });
    },

    async start(args) {
      const { values } = parse(args, { port: { type: "string" } }, LOCAL_USAGE("start"));
      if (values.help) return out(LOCAL_USAGE("start")), 0;
      return runLocal("start", { io, style, port: str(values.port) });
    },

    async dev(args) {
      const { values } = parse(args, { port: { type: "string" } }, LOCAL_USAGE("dev"));
      if (values.help) return out(LOCAL_USAGE("dev")), 0;
      return runLocal("dev", { io, style, port: str(values.port) });
    },

    gateway: (args) => gatewayCommand(args, io),
  };

  return {
    async run(): Promise<number> {
      const [cmd, ...rest] = argv;
      try {
        if (!cmd || cmd === "-h" || cmd === "--help" || cmd === "help") {
          out(MAIN_HELP);
          return cmd ? 0 : 2;
        }
        if (cmd === "-v" || cmd === "--version") return out(CLI_VERSION), 0;
        const handler = commands[cmd];
        if (!handler) throw new CliError(`unknown command '${cmd}'\n\n${MAIN_HELP}`, 2);
        return await handler(rest);
      } catch (err) {
        if (err instanceof CliError) {
          println(io.stderr, `${styleFor(io.stderr, io.env).red("error:")} ${err.message}`);
          return err.exitCode;
        }
        throw err;
      }
    },
  };
}
