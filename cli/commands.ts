import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "./errors.ts";
import { errorMessage } from "../workers/log/index.ts";
import { PLATFORM_INFO, PLATFORMS } from "../workers/platforms/names.ts";

/**
 * The CLI's commands, subcommands and flags, in one table: the parser, every `--help` and
 * the shell completion scripts are all made from it, so they cannot disagree.
 */
export interface FlagSpec {
  name: string;
  short?: string;
  type: "string" | "boolean";
  /** The value's placeholder in help (`<ref>`). */
  value?: string;
  help: string;
  /** Values a shell may offer for it. */
  choices?: readonly string[];
}

export interface SubcommandSpec {
  name: string;
  /** Positional arguments, as shown in help (`<id|title|latest>`). */
  args?: string;
  /** Names of the command's flags this subcommand takes. */
  flags: readonly string[];
  help: string;
}

export interface CommandSpec {
  name: string;
  /** One line for the main help. */
  summary: string;
  /** What follows `hermes-edge <name>` on the usage line. */
  synopsis: string;
  /** Paragraphs after the usage line. */
  about?: string;
  flags: readonly FlagSpec[];
  subcommands?: readonly SubcommandSpec[];
  /** Text after the options. */
  footer?: string;
}

const PLATFORM_NAMES = ["telegram", "discord", "slack"] as const;
const REF = "<id|title|latest>";

export const HELP_FLAG: FlagSpec = { name: "help", short: "h", type: "boolean", help: "this help" };

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "chat",
    summary: "interactive chat (a terminal, or lines piped on stdin)",
    synopsis: "chat [--resume <id|title|latest>] [--no-wait]",
    about:
      "Interactive chat with the agent. Replies stream as they arrive; Ctrl-C stops a\nrunning reply or clears a half-typed line; Ctrl-C at an empty prompt, Ctrl-D or\n/quit leaves; Tab completes a /command. With stdin piped, each line is one message and the chat ends at end of input. When the session is busy with\nanother turn, the chat waits for it (Ctrl-C stops waiting).",
    flags: [
      { name: "resume", short: "r", type: "string", value: "<ref>", help: 'continue a session: its id, its title, or "latest"' },
      { name: "no-wait", type: "boolean", help: "fail instead of waiting when the session is busy" },
    ],
    footer: "In the chat: /new, /sessions, /resume [n|id|title], /handoff <platform>, /help, /quit",
  },
  {
    name: "sessions",
    summary: "list, show, change, hand off, export, import and delete sessions (--json)",
    synopsis: "sessions <list|show|messages|set|handoff|export|import|delete> [options]",
    flags: [
      { name: "limit", type: "string", value: "<n>", help: "how many sessions to list (1-200, default 50)" },
      { name: "title", type: "string", value: "<text>", help: "the session's new title" },
      { name: "instructions", type: "string", value: "<text>", help: "the session's own instructions for the agent (- reads stdin)" },
      { name: "clear-instructions", type: "boolean", help: "remove the session's own instructions" },
      { name: "format", type: "string", value: "<jsonl|md>", help: "export format: jsonl (imports back; default) or md (to read)", choices: ["jsonl", "md"] },
      { name: "out", type: "string", value: "<dir>", help: "write one file per session into this directory (default: stdout)" },
      { name: "since", type: "string", value: "<day|time>", help: "only sessions active since then (2026-11-30, or an ISO time)" },
      { name: "yes", short: "y", type: "boolean", help: "delete without asking" },
      { name: "to", type: "string", value: "<platform>[:<chat_id>]", help: "where to hand the session off to", choices: PLATFORM_NAMES },
      { name: "no-thread", type: "boolean", help: "hand off into the channel itself, not a new thread" },
      { name: "dm", type: "boolean", help: "to the DM of your account there (linked to this CLI with hermes-edge link)" },
      { name: "no-wait", type: "boolean", help: "return once the handoff is queued" },
      { name: "json", type: "boolean", help: "print the object the matching API route returns" },
    ],
    subcommands: [
      { name: "list", flags: ["limit", "json"], help: "recent sessions, newest first" },
      { name: "show", args: REF, flags: ["json"], help: "one session and its transcript" },
      { name: "messages", args: REF, flags: ["json"], help: "the transcript only" },
      { name: "set", args: REF, flags: ["title", "instructions", "clear-instructions", "json"], help: "change a session's title or its own instructions" },
      {
        name: "handoff",
        args: REF,
        flags: ["to", "no-thread", "dm", "no-wait", "json"],
        help: "move a session to a platform's home channel (or that chat, or with --dm your DM); waits\nfor the result and exits 0 only when it completed (--no-wait: once queued)",
      },
      {
        name: "export",
        args: "[<id|title|latest>]",
        flags: ["format", "out", "since", "json"],
        help: "one session, or every one (active --since), with messages,\nsummary and usage; JSONL goes back in with `sessions import`",
      },
      { name: "import", args: "<file.jsonl|->", flags: ["json"], help: "bring exported sessions back (ones already there are skipped)" },
      {
        name: "delete",
        args: REF,
        flags: ["yes", "json"],
        help: "delete a session everywhere: transcript, summary, usage, files;\na chat bound to it starts fresh (asks first unless --yes)",
      },
    ],
  },
  {
    name: "link",
    summary: "link this CLI to your account on a platform (the code /link gave you there)",
    synopsis: "link <code> [--json]",
    about:
      "Send /link to the bot in a DM on a platform; it answers with a one-time code (10 minutes).\nRun hermes-edge link <code> to join that account and the operator's CLI into one person:\n`sessions handoff --dm` can then hand sessions to that DM, and /handoff cli in a chat parks\nsessions for `hermes-edge chat`. /whoami in the chat lists the linked accounts.",
    flags: [{ name: "json", type: "boolean", help: "print the object POST /v1/links returns" }],
  },
  {
    name: "usage",
    summary: "tokens used, per session, platform user or UTC day (--json)",
    synopsis: "usage [--group session|user|day] [--since <day>] [--until <day>] [--json]",
    about:
      "Input and output tokens of every turn, as the provider reported them (or estimated\nwhen it did not), grouped. Days are UTC, YYYY-MM-DD; --since and --until include them.",
    flags: [
      { name: "group", type: "string", value: "<by>", help: "session, user or day (default day)", choices: ["session", "user", "day"] },
      { name: "since", type: "string", value: "<day>", help: "from this UTC day" },
      { name: "until", type: "string", value: "<day>", help: "to this UTC day" },
      { name: "json", type: "boolean", help: "print the object GET /v1/usage returns" },
    ],
  },
  {
    name: "status",
    summary: "check the Worker, its token, model, platforms, relay, D1 and cron (--json)",
    synopsis: "status [--json]",
    about:
      "Checks everything a working setup needs, each problem with the command that fixes it:\nthe Worker answers (and its version), the token is accepted, the model provider answers,\neach platform's own view of its webhook (Telegram getWebhookInfo, Discord's interactions\nendpoint, Slack auth.test), relay gateways, D1 migrations applied, when the cron last ran.\nExit code 1 when anything is wrong.",
    flags: [{ name: "json", type: "boolean", help: "print the report as JSON" }],
  },
  {
    name: "login",
    summary: "check a Worker's URL and token and save them (a profile)",
    synopsis: "login [--url <worker url>] [--token <token>] [--profile <name>]",
    about:
      'Checks that the URL answers as a hermes-edge Worker (GET /health) and that the token\nis accepted, then saves both in the profile (default "default") in\n$XDG_CONFIG_HOME/hermes-edge/config.json (else ~/.config/...), readable by you only.\nWithout --token the token is asked for on the terminal, not echoed.\nHERMES_EDGE_URL and HERMES_EDGE_TOKEN, when set, win over a profile.',
    flags: [
      { name: "url", type: "string", value: "<url>", help: "the Worker (https://…; plain http only for this machine)" },
      { name: "token", type: "string", value: "<token>", help: "its API_TOKEN (else asked for)" },
      { name: "profile", type: "string", value: "<name>", help: 'the profile to save (default "default")' },
    ],
  },
  {
    name: "logout",
    summary: "forget a saved profile",
    synopsis: "logout [--profile <name>]",
    about: "Removes the profile's URL and token from the config file.",
    flags: [{ name: "profile", type: "string", value: "<name>", help: 'the profile to remove (default "default")' }],
  },
  {
    name: "setup",
    summary: "point a platform at the Worker (webhook, commands, manifest)",
    synopsis: `setup <${PLATFORMS.join("|")}> [--url <worker url>] [--json]`,
    about: "Settings are read from the environment, then ./.dev.vars. The Worker's URL is --url,\nelse HERMES_EDGE_URL; platforms need it public (https).",
    flags: [
      { name: "url", type: "string", value: "<url>", help: "the Worker's public URL" },
      { name: "json", type: "boolean", help: "print the result as JSON" },
    ],
    subcommands: PLATFORMS.map((name) => ({ name, flags: ["url", "json"], help: PLATFORM_INFO[name].setupHelp })),
  },
  {
    name: "start",
    summary: "local Worker + chat (what `npm start` runs)",
    synopsis: "start [--port <n>]",
    about:
      "Applies local D1 migrations, makes sure .dev.vars has an API_TOKEN, starts the\nWorker locally (wrangler dev), waits for it, and opens the chat. Leaving the chat\nstops the Worker. Runs in a hermes-edge checkout.",
    flags: [{ name: "port", type: "string", value: "<n>", help: "port for the local Worker (default 8787)" }],
  },
  {
    name: "dev",
    summary: "local Worker only (what `npm run dev` runs)",
    synopsis: "dev [--port <n>]",
    about:
      "Applies local D1 migrations, makes sure .dev.vars has an API_TOKEN, and runs the\nWorker locally (wrangler dev) in the foreground. Runs in a hermes-edge checkout.",
    flags: [{ name: "port", type: "string", value: "<n>", help: "port for the local Worker (default 8787)" }],
  },
  {
    name: "gateway",
    summary: "relay gateway: serve platform messages through a Worker, no public IP",
    synopsis: "gateway [--platforms telegram,discord,slack] [--bridge signal] [--db <path>] [--mcp <file>]",
    about:
      "Runs a relay gateway: dials out to a hermes-edge Worker's /relay WebSocket (no public\naddress needed), receives the platform messages relayed to this gateway, answers them\nwith the agent, and sends the replies back through the Worker. Stops on Ctrl-C/SIGTERM.\nNeeds Node 22.13 or later.",
    flags: [
      { name: "platforms", type: "string", value: "<list>", help: "platforms to front, comma separated (default: all three)", choices: PLATFORM_NAMES },
      {
        name: "bridge",
        type: "string",
        value: "<list>",
        help: "platforms this machine reaches and bridges to the Worker,\nwhich runs their turns (signal: signal-cli's HTTP daemon)",
        choices: ["signal"],
      },
      {
        name: "db",
        type: "string",
        value: "<path>",
        help: "local transcripts and replay dedupe (default\n.hermes-edge/gateway-<id>.db in the current directory)",
      },
      {
        name: "mcp",
        type: "string",
        value: "<file>",
        help: 'MCP servers whose tools the agent may use: a JSON list of\n{"name","command","args"?,"env"?} (local, started here) or\n{"name","url"} (remote; token from MCP_TOKEN_<NAME>)',
      },
    ],
    footer:
      "Environment:\n  GATEWAY_RELAY_URL      the Worker (https://… or wss://…; /relay is appended)\n  GATEWAY_RELAY_ID       this gateway's id in the Worker's RELAY_SECRETS\n  GATEWAY_RELAY_SECRET   its secret there\n  LLM_BASE_URL, LLM_API_KEY, LLM_MODEL   the model (unset LLM_BASE_URL: offline model)\n  LLM_PROVIDER                           openai or offline (workers-ai is edge-only)\n  BUSY_POLICY                            queue (default) or interrupt, as on the Worker\n  SYSTEM_PROMPT, LLM_CONTEXT_TOKENS      instructions and context budget, as on the Worker\n  MCP_TOKEN_<NAME>, TOOL_TIMEOUT_MS      remote MCP servers' tokens; tool call limit (ms)\n  OFFLINE_STREAM_DELAY_MS                offline model: pause between words\n  SIGNAL_CLI_URL, SIGNAL_ACCOUNT         --bridge signal: signal-cli's HTTP daemon\n                                         (default http://127.0.0.1:8080) and its account",
  },
  {
    name: "completion",
    summary: "print a shell completion script (bash, zsh, fish)",
    synopsis: "completion <bash|zsh|fish>",
    about:
      "Prints a completion script for the commands, subcommands and flags. To install it:\n  bash  echo 'source <(hermes-edge completion bash)' >> ~/.bashrc\n  zsh   hermes-edge completion zsh > \"${fpath[1]}/_hermes-edge\"   (then restart zsh)\n  fish  hermes-edge completion fish > ~/.config/fish/completions/hermes-edge.fish",
    flags: [],
    subcommands: [
      { name: "bash", flags: [], help: "for bash 4 and later" },
      { name: "zsh", flags: [], help: "for zsh (compsys)" },
      { name: "fish", flags: [], help: "for fish" },
    ],
  },
];

/** The table entry for a command name. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** A command's flags with --help, as completion and help list them. */
export function allFlags(cmd: CommandSpec): FlagSpec[] {
  return [...cmd.flags, HELP_FLAG];
}

function flagLabel(f: FlagSpec): string {
  return `${f.short ? `-${f.short}, ` : "    "}--${f.name}${f.value ? ` ${f.value}` : ""}`;
}

/**
 * Two columns, the second indented under itself when it wraps; a left cell longer than
 * `maxLeft` gets a line of its own, its text below it in the second column.
 */
function columns(rows: Array<[string, string]>, min = 0, maxLeft = 30): string[] {
  const width = Math.max(min, ...rows.map(([l]) => l.length).filter((n) => n <= maxLeft)) + 3;
  return rows.flatMap(([left, right]) => {
    const lines = right.split("\n").map((line) => `${" ".repeat(width + 2)}${line}`);
    if (left.length <= maxLeft) lines[0] = `  ${left.padEnd(width)}${right.split("\n")[0]}`;
    else lines.unshift(`  ${left}`);
    return lines.map((l) => l.trimEnd());
  });
}

/** The command's flag a subcommand names (the command table lists every subcommand flag on its command). */
function flagOf(cmd: CommandSpec, name: string): FlagSpec {
  const f = cmd.flags.find((x) => x.name === name);
  if (!f) throw new RangeError(`hermes-edge ${cmd.name}: a subcommand names --${name}, which the command does not declare`);
  return f;
}

/** `hermes-edge <command> --help`. */
export function commandHelp(cmd: CommandSpec): string {
  const parts = [`Usage: hermes-edge ${cmd.synopsis}`];
  if (cmd.about) parts.push(cmd.about);
  if (cmd.subcommands) {
    parts.push(
      columns(
        cmd.subcommands.map((s) => {
          // Flags are shown per subcommand only where subcommands differ in them.
          const same = s.flags.length === cmd.flags.length;
          const flags = same ? [] : s.flags.map((n) => flagOf(cmd, n)).map((f) => `[--${f.name}${f.value ? ` ${f.value}` : ""}]`);
          return [[s.name, s.args, ...flags].filter(Boolean).join(" "), s.help];
        }),
      ).join("\n"),
    );
  }
  parts.push(`Options:\n${columns(allFlags(cmd).map((f) => [flagLabel(f), f.help])).join("\n")}`);
  if (cmd.footer) parts.push(cmd.footer);
  return parts.join("\n\n");
}

/** `hermes-edge --help`. */
export function mainHelp(version: string): string {
  const list = COMMANDS.map((c): [string, string] => [c.subcommands ? `${c.name} ${c.subcommands.map((s) => s.name).join("|")}` : c.name, c.summary]);
  return [
    `hermes-edge ${version}: talk to your agent on a hermes-edge Worker`,
    "Usage: hermes-edge <command> [options]",
    `Commands:\n${columns(list, 28).join("\n")}`,
    `Options:\n${columns(
      [
        ["-h, --help", "help for hermes-edge or a command"],
        ["-v, --version", "print the version"],
      ],
      28,
    ).join("\n")}`,
    `Environment:\n${columns(
      [
        ["HERMES_EDGE_URL", "the Worker (else the profile's, else http://127.0.0.1:8787)"],
        ["HERMES_EDGE_TOKEN", "its API_TOKEN (else the profile's; locally read from ./.dev.vars)"],
        ["HERMES_EDGE_PROFILE", 'the saved profile to use (default "default"; see login)'],
        ["NO_COLOR", "no colours (also off when output is not a terminal)"],
      ],
      28,
    ).join("\n")}`,
    "Run `hermes-edge <command> --help` for a command's options.",
  ].join("\n\n");
}

/** Parsed flags and positionals of one command. */
export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parses a command's arguments by its table entry; a bad flag is exit code 2 with the usage. */
export function parseCommand(cmd: CommandSpec, args: string[]): Parsed {
  const options: NonNullable<ParseArgsConfig["options"]> = {};
  for (const f of allFlags(cmd)) options[f.name] = { type: f.type, ...(f.short ? { short: f.short } : {}) };
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as Parsed["values"], positionals };
  } catch (err) {
    throw usageError(cmd, argsProblem(err));
  }
}

/** `hermes-edge <synopsis>` and where the rest is: what follows a usage error. */
export function usageLine(cmd: CommandSpec): string {
  return `usage: hermes-edge ${cmd.synopsis}  (hermes-edge ${cmd.name} --help for more)`;
}

/** A usage error (exit code 2): the one-line problem, then the command's usage line. */
export function usageError(cmd: CommandSpec, message: string): CliError {
  return new CliError(`${message}\n${usageLine(cmd)}`, 2);
}

/** Node's parseArgs message in our words: its raw text suggests `-- "--bogus"`, which is no use here. */
function argsProblem(err: unknown): string {
  const code = (err as { code?: string }).code;
  const message = errorMessage(err);
  const flag = /'(-[^']*)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag) return `unknown option '${flag.split(" ")[0]}'`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = /--([a-z-]+)/.exec(message)?.[1];
    if (name && /argument missing/.test(message)) return `option '--${name}' needs a value`;
    if (name) return `option '--${name}' takes no value`;
  }
  return (message.split(/\.\s/)[0] ?? message).replace(/\.$/, "");
}
