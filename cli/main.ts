import path from "node:path";
import { VERSION } from "../workers/version.ts";
import type { PlatformName } from "../workers/platforms/names.ts";
import type { Message, Session } from "./api-types.ts";
import { Chat } from "./chat.ts";
import { ApiClient, CliError, resolveTarget } from "./client.ts";
import { commandHelp, findCommand, mainHelp, parseCommand, usageError, type CommandSpec, type Parsed } from "./commands.ts";
import { completionScript, SHELLS, type Shell } from "./completion.ts";
import { deleteSession, exportSessions, importSessions, setSession, showUsage } from "./data.ts";
import { runHandoff } from "./handoff.ts";
import { processIo, println, styleFor, type CliIo, type Style } from "./io.ts";
import { runLocal } from "./local.ts";
import { runLogin, runLogout } from "./login.ts";
import { formatSessionList, formatTranscript, resolveSession } from "./sessions.ts";

export const CLI_VERSION = VERSION;

function str(v: string | boolean | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

type Handler = (parsed: Parsed, cmd: CommandSpec) => Promise<number>;

const usage = usageError;

/** The CLI, testable in-process: `await createCli(argv, io).run()` gives the exit code. */
export function createCli(argv: string[], io: CliIo = processIo()) {
  const out = (s = "") => println(io.stdout, s);
  const style: Style = styleFor(io.stdout, io.env);
  const client = () => new ApiClient(resolveTarget(io), io.fetch);
  // `hermes-edge … | head`: once the reader is gone, writing fails with EPIPE (maybe after
  // the command is done). That is the reader's choice, not a failure: stop quietly, exit 0.
  // The listener stays for the life of the stream, so a late EPIPE is never unhandled.
  let stdoutClosed = false;
  let closed: (code: number) => void = () => {};
  const whenClosed = new Promise<number>((resolve) => (closed = resolve));
  io.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE" && err.code !== "ERR_STREAM_DESTROYED") throw err;
    stdoutClosed = true;
    closed(0);
  });

  const handlers: Record<string, Handler> = {
    async chat({ values, positionals }, cmd) {
      if (positionals.length > 0) throw usage(cmd, `chat takes no arguments (got '${positionals.join(" ")}')`);
      return new Chat({ client: client(), io, style, wait: values["no-wait"] !== true }).run(str(values.resume));
    },

    async sessions({ values, positionals }, cmd) {
      const [sub, ref, ...extra] = positionals;
      if (!sub) return (out(commandHelp(cmd)), 2);
      if (extra.length > 0) throw usage(cmd, `unexpected arguments: ${extra.join(" ")}`);
      const api = client();
      if (sub === "list") {
        const limit = values.limit === undefined ? 50 : Number(str(values.limit));
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new CliError("--limit must be a whole number from 1 to 200", 2);
        const body = await api.json<{ sessions: Session[] }>("GET", `/v1/sessions?limit=${limit}`);
        if (values.json) return (out(JSON.stringify(body)), 0);
        for (const l of formatSessionList(body.sessions, io.now(), style)) out(l);
        return 0;
      }
      if (sub === "show" || sub === "messages") {
        if (!ref) throw usage(cmd, `sessions ${sub} needs a session id, title or "latest"`);
        const s = await resolveSession(api, ref);
        const path = `/v1/sessions/${encodeURIComponent(s.id)}`;
        if (sub === "show" && values.json) return (out(JSON.stringify(await api.json("GET", path))), 0);
        const body = await api.json<{ messages: Message[] }>("GET", `${path}/messages`);
        if (values.json) return (out(JSON.stringify(body)), 0);
        if (sub === "show") {
          out(`${style.bold(s.title ?? "(untitled)")}  ${style.cyan(s.id)}`);
          out(
            style.dim(
              `${s.source} · ${s.message_count} messages · model ${s.model ?? "?"}${s.running ? " · running" : ""}${s.handoff ? ` · handoff ${s.handoff.state}` : ""}`,
            ),
          );
          out();
        }
        for (const l of formatTranscript(body.messages, style)) out(l);
        return 0;
      }
      if (sub === "handoff") {
        if (!ref) throw usage(cmd, `sessions handoff needs a session id, title or "latest"`);
        const to = str(values.to);
        if (!to) throw usage(cmd, "sessions handoff needs --to <platform>[:<chat_id>]");
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
          ...(values.dm === true ? { person: "operator" } : {}),
          wait: values["no-wait"] !== true,
          progress: values.json ? io.stderr : io.stdout,
        });
        if (values.json) out(JSON.stringify(outcome === "queued" ? await api.json("GET", `/v1/sessions/${encodeURIComponent(s.id)}/handoff`) : { handoff }));
        return outcome === "completed" || outcome === "queued" ? 0 : 1;
      }
      const ctx = { api, io, style, json: values.json === true };
      if (sub === "set") {
        if (!ref) throw usage(cmd, `sessions set needs a session id, title or "latest"`);
        const title = str(values.title);
        const instructions = str(values.instructions);
        return setSession(ctx, ref, {
          ...(title !== undefined ? { title } : {}),
          ...(instructions !== undefined ? { instructions } : {}),
          clearInstructions: values["clear-instructions"] === true,
        });
      }
      if (sub === "delete") {
        if (!ref) throw usage(cmd, `sessions delete needs a session id, title or "latest"`);
        return deleteSession(ctx, ref, values.yes === true);
      }
      if (sub === "export") {
        const outFile = str(values.out);
        const since = str(values.since);
        return exportSessions(ctx, ref, {
          format: str(values.format) ?? "jsonl",
          ...(outFile ? { out: path.resolve(io.cwd, outFile) } : {}),
          ...(since ? { since } : {}),
        });
      }
      if (sub === "import") {
        if (!ref) throw usage(cmd, "sessions import needs a file (or - for stdin)");
        return importSessions(ctx, ref);
      }
      throw usage(cmd, `unknown sessions command '${sub}'`);
    },

    async link({ values, positionals }, cmd) {
      const [code, ...extra] = positionals;
      if (!code || extra.length > 0)
        throw usage(cmd, code ? `link takes one code (got '${positionals.join(" ")}')` : "link needs the code /link gave you in a chat");
      const body = await client().json<{ person: { accounts: Array<{ platform: string; user_id: string }> }; message: string }>("POST", "/v1/links", { code });
      if (values.json) return (out(JSON.stringify(body)), 0);
      const others = body.person.accounts.filter((a) => a.platform !== "cli").map((a) => `${a.platform} user ${a.user_id}`);
      out(style.green(`Linked: this CLI is now the same person as ${others.join(", ")}.`));
      return 0;
    },

    async usage({ values, positionals }, cmd) {
      if (positionals.length > 0) throw usage(cmd, `usage takes no arguments (got '${positionals.join(" ")}')`);
      const since = str(values.since);
      const until = str(values.until);
      return showUsage(
        { api: client(), io, style, json: values.json === true },
        { group: str(values.group) ?? "day", ...(since ? { since } : {}), ...(until ? { until } : {}) },
      );
    },

    async status({ values, positionals }, cmd) {
      if (positionals.length > 0) throw usage(cmd, "status takes no arguments");
      const { runStatus } = await import("./status.ts");
      return runStatus({ api: client(), io, style, json: values.json === true });
    },

    async login({ values, positionals }, cmd) {
      if (positionals.length > 0) throw usage(cmd, "login takes no arguments");
      return runLogin({ io, style, url: str(values.url), token: str(values.token), profile: str(values.profile) });
    },

    async logout({ values, positionals }, cmd) {
      if (positionals.length > 0) throw usage(cmd, "logout takes no arguments");
      return runLogout({ io, style, profile: str(values.profile) });
    },

    async setup({ values, positionals }, cmd) {
      if (positionals.length > 1) throw usage(cmd, "setup takes one platform");
      const platform = positionals[0];
      if (!cmd.subcommands?.some((s) => s.name === platform)) throw usage(cmd, platform ? `unknown platform '${platform}'` : "which platform?");
      // Loaded only now: the platform SDKs are the CLI's largest part.
      const { runSetup } = await import("./setup.ts");
      return runSetup(platform as PlatformName, { io, style, url: str(values.url), json: values.json === true });
    },

    start: ({ values }) => runLocal("start", { io, style, port: str(values.port) }),
    dev: ({ values }) => runLocal("dev", { io, style, port: str(values.port) }),

    async gateway({ values, positionals }, cmd) {
      if (positionals.length > 0) throw usage(cmd, `gateway takes no arguments (got '${positionals.join(" ")}')`);
      const { gatewayCommand } = await import("./gateway/command.ts");
      return gatewayCommand({ platforms: str(values.platforms), bridge: str(values.bridge), db: str(values.db), mcp: str(values.mcp) }, io);
    },

    async completion({ positionals }, cmd) {
      const [shell, ...extra] = positionals;
      if (!shell || extra.length > 0 || !SHELLS.includes(shell as Shell))
        throw usage(cmd, shell ? `no completion for '${positionals.join(" ")}' (bash, zsh or fish)` : "which shell?");
      io.stdout.write(completionScript(shell as Shell));
      return 0;
    },
  };

  async function dispatch(): Promise<number> {
    const [name, ...rest] = argv;
    if (!name || name === "-h" || name === "--help" || name === "help") {
      out(mainHelp(CLI_VERSION));
      return name ? 0 : 2;
    }
    if (name === "-v" || name === "--version") return (out(CLI_VERSION), 0);
    const cmd = findCommand(name);
    const handler = handlers[name];
    if (!cmd || !handler) throw new CliError(`unknown command '${name}'\nusage: hermes-edge <command> [options]  (hermes-edge --help lists the commands)`, 2);
    const parsed = parseCommand(cmd, rest);
    if (parsed.values.help) return (out(commandHelp(cmd)), 0);
    return handler(parsed, cmd);
  }

  return {
    /** Whether stdout was closed under the CLI (`| head`): the process should just exit. */
    get stdoutClosed(): boolean {
      return stdoutClosed;
    },

    async run(): Promise<number> {
      try {
        return await Promise.race([dispatch(), whenClosed]);
      } catch (err) {
        if (stdoutClosed) return 0;
        if (err instanceof CliError) {
          println(io.stderr, `${styleFor(io.stderr, io.env).red("error:")} ${err.message}`);
          return err.exitCode;
        }
        throw err;
      }
    },
  };
}
