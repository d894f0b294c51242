import type { ChatType } from "./types.ts";

/**
 * The chat commands, in one table: `/help`, Discord's command registration, the Slack
 * manifest, Telegram's `setMyCommands` and the permission check are all made from it, so
 * they cannot disagree (as `cli/commands.ts` does for the CLI's flags). Each adapter spells
 * a command its platform's way from these fields: Telegram `/name`, Discord `/name` with
 * the argument as the option `arg.name`, Slack `/hermes name <arg.usage>`.
 */

/** Who may run a command: anyone (even people not allowed to use the bot), allowed users (`*_ALLOWED_USERS`), or admins (`*_ADMIN_USERS`). */
export type Audience = "anyone" | "allowed" | "admin";

/** A command's one argument, where it has one. */
export interface CommandArg {
  /** Its name: Discord's option name (`/resume session:`). */
  name: string;
  /** How it is shown in help texts (`<id or title>`). */
  usage: string;
  /** One line, at most 100 characters (Discord's limit for an option). */
  description: string;
  required: boolean;
  /** The platform may offer values while it is typed (Discord autocomplete). */
  suggest?: boolean;
}

export interface ChatCommandSpec {
  name: string;
  /** The line in `/help`, after `/name <usage>: `. */
  help: string;
  /** One line, at most 100 characters (Discord's limit; Telegram's is 256): registrations and menus. */
  description: string;
  arg?: CommandArg;
  who: Audience;
  /** Where it may be used. */
  where: readonly ChatType[];
  /** What it does, for a refusal ("only TELEGRAM_ADMIN_USERS may …"). */
  action: string;
}

const EVERYWHERE = ["dm", "group", "channel", "thread"] as const satisfies readonly ChatType[];

/** Every chat command, in the order `/help` lists them. */
export const CHAT_COMMANDS = [
  {
    name: "stop",
    help: "stop the reply that is running here",
    description: "Stop the reply that is running in this chat",
    who: "allowed",
    where: EVERYWHERE,
    action: "stop a reply",
  },
  { name: "new", help: "start a fresh session here", description: "Start a fresh session here", who: "allowed", where: EVERYWHERE, action: "start a session" },
  {
    name: "resume",
    help: "continue an earlier session here (no argument: list the ones you may resume)",
    description: "Continue an earlier session here",
    arg: { name: "session", usage: "<id or title>", description: "Session id or title (empty: list recent)", required: false, suggest: true },
    who: "allowed",
    where: EVERYWHERE,
    action: "resume a session",
  },
  {
    name: "status",
    help: "this chat's session, its context use, and whether a reply is running",
    description: "This chat's session: model, context use, whether a turn runs",
    who: "allowed",
    where: EVERYWHERE,
    action: "see the session's status",
  },
  {
    name: "instructions",
    help: "show or set this session's own instructions",
    description: "Show or set this session's instructions",
    arg: { name: "text", usage: "[text|clear]", description: "New instructions, or 'clear'", required: false },
    who: "allowed",
    where: EVERYWHERE,
    action: "change the session's instructions",
  },
  {
    name: "compact",
    help: "fold the older part of this session into its summary now",
    description: "Fold the older part of this session into its summary now",
    who: "allowed",
    where: EVERYWHERE,
    action: "compact the session",
  },
  { name: "tools", help: "what the agent can use", description: "What the agent can use", who: "allowed", where: EVERYWHERE, action: "list the tools" },
  {
    name: "handoff",
    help: "move this session to your DM on another platform (admins: to its home channel with home, or to the CLI)",
    description: "Move this session to your DM on another platform",
    arg: { name: "to", usage: "<platform>|cli [home]", description: "A platform (your DM there), 'telegram home' (admins), or 'cli' (admins)", required: true },
    who: "allowed",
    where: EVERYWHERE,
    action: "hand off a session",
  },
  {
    name: "link",
    help: "link your accounts on several platforms into one person (no argument: get a one-time code; then /link <code> on the other)",
    description: "Link this account with yours on another platform",
    arg: { name: "code", usage: "[code]", description: "The code /link gave you on the other platform (empty: get one)", required: false },
    who: "allowed",
    where: ["dm"],
    action: "link accounts",
  },
  {
    name: "unlink",
    help: "undo the link to your account on that platform",
    description: "Unlink your account on another platform",
    arg: { name: "platform", usage: "<platform>", description: "The platform whose linked account to unlink", required: true },
    who: "allowed",
    where: EVERYWHERE,
    action: "unlink accounts",
  },
  {
    name: "sethome",
    help: "make this chat the home channel for handoffs from the CLI",
    description: "Make this chat the home channel for handoffs",
    who: "admin",
    where: EVERYWHERE,
    action: "set the home channel",
  },
  {
    name: "whoami",
    help: "your user id here, and your linked accounts",
    description: "Your user id here, and whether you may use this bot",
    who: "anyone",
    where: EVERYWHERE,
    action: "ask who you are",
  },
  { name: "help", help: "this help", description: "What this bot can do", who: "anyone", where: EVERYWHERE, action: "see the help" },
] as const satisfies readonly ChatCommandSpec[];

/** Chat commands every platform understands. */
export type CommandName = (typeof CHAT_COMMANDS)[number]["name"];

export const COMMANDS: readonly CommandName[] = CHAT_COMMANDS.map((c) => c.name);

export function isCommandName(v: string): v is CommandName {
  return (COMMANDS as readonly string[]).includes(v);
}

/** A command's row of the table. */
export function commandSpec(name: CommandName): ChatCommandSpec {
  const spec = CHAT_COMMANDS.find((c) => c.name === name);
  if (!spec) throw new RangeError(`the chat command table has no row for ${name}`);
  return spec;
}

/** `name <usage>`: how a command is written after its prefix. */
export function commandUsage(spec: ChatCommandSpec): string {
  return spec.arg ? `${spec.name} ${spec.arg.usage}` : spec.name;
}

/** What the one who asks is, for {@link mayRun}. */
export interface Asker {
  /** Listed in `*_ALLOWED_USERS`. */
  allowed: boolean;
  /** Listed in `*_ADMIN_USERS`. */
  admin: boolean;
  chatType: ChatType;
}

/** Whether a command may run, and if not, what is missing (the weakest missing first: an unknown user is refused as such). */
export type Permission = { ok: true } | { ok: false; need: "allowed" | "admin" | "place" };

/** Decides whether `asker` may run `name` here: the command's audience, then its places. */
export function mayRun(name: CommandName, asker: Asker): Permission {
  const spec = commandSpec(name);
  if (spec.who === "admin" && !asker.admin) return { ok: false, need: asker.allowed ? "admin" : "allowed" };
  if (spec.who === "allowed" && !asker.allowed) return { ok: false, need: "allowed" };
  if (!spec.where.includes(asker.chatType)) return { ok: false, need: "place" };
  return { ok: true };
}
