import { InteractionResponseFlags, InteractionResponseType, InteractionType } from "discord-interactions";
import { checkJson } from "../boundary.ts";
import { CHAT_COMMANDS, type ChatCommandSpec } from "../commands.ts";
import { isCommandName, type Attachment, type Choice, type CommandName, type Ingest, type SessionSource } from "../types.ts";
import { discordTarget, discordTargets } from "./target.ts";
import { DiscordInteraction, type DiscordAttachment, type DiscordUser } from "./schema.ts";

/** Thread channel types: announcement, public and private threads. */
export const THREAD_TYPES = new Set([10, 11, 12]);

/** Application command kinds (data.type). */
const CHAT_INPUT = 1;
const MESSAGE_COMMAND = 3;
/** Option type of a file (its value is an id resolved in `data.resolved.attachments`). */
const ATTACHMENT_OPTION = 11;

/** The message context-menu command this app registers: runs a turn on the message it is used on. */
export const ASK_MESSAGE_COMMAND = "Ask hermes";

/** A string option (type 3). */
const STRING_OPTION = 3;

/** A chat command of the table as Discord registers it: its argument is a string option named `arg.name`. */
function discordCommand(spec: ChatCommandSpec) {
  const { arg } = spec;
  const options = arg
    ? [{ type: STRING_OPTION, name: arg.name, description: arg.description, required: arg.required, ...(arg.suggest ? { autocomplete: true } : {}) }]
    : undefined;
  return { name: spec.name, description: spec.description, ...(options ? { options } : {}) };
}

/** The commands this app registers (see setup): `ask` carries a message, then every chat command of the table, then the message command. */
export const DISCORD_COMMANDS = [
  {
    name: "ask",
    description: "Talk to the agent",
    options: [
      { type: STRING_OPTION, name: "prompt", description: "Your message", required: true },
      { type: ATTACHMENT_OPTION, name: "file", description: "A file, picture or voice note for the agent", required: false },
    ],
  },
  ...CHAT_COMMANDS.map(discordCommand),
  { name: ASK_MESSAGE_COMMAND, type: MESSAGE_COMMAND },
];

/** The option of each command that carries its argument. */
const ARG_OPTION: Record<string, string> = Object.fromEntries(CHAT_COMMANDS.flatMap((c: ChatCommandSpec) => (c.arg ? [[c.name, c.arg.name]] : [])));

export function ephemeral(content: string): Response {
  return Response.json({
    type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE,
    data: { content, flags: InteractionResponseFlags.EPHEMERAL, allowed_mentions: { parse: [] } },
  });
}

/**
 * The source of an interaction: a DM, a guild channel (a group, per user), or a thread,
 * keyed on the thread's own id as both chat and thread (one shared session per thread).
 */
export function discordSource(i: Pick<DiscordInteraction, "guild_id" | "channel_id" | "channel">, user: DiscordUser): SessionSource {
  const channelId = i.channel?.id ?? i.channel_id ?? "";
  const base = { platform: "discord" as const, userId: user.id, userName: user.global_name ?? user.username ?? null, userHandle: user.username ?? null };
  if (!i.guild_id) return { ...base, chatType: "dm", chatId: channelId, threadId: null };
  if (i.channel && THREAD_TYPES.has(i.channel.type)) return { ...base, chatType: "thread", chatId: channelId, threadId: channelId };
  return { ...base, chatType: "group", chatId: channelId, threadId: null };
}

/** A Discord attachment as a neutral one (voice messages are audio files with a duration). */
export function attachment(a: DiscordAttachment): Attachment {
  const mime = a.content_type ?? null;
  // Voice messages are audio files with a duration.
  const kind: Attachment["kind"] = mime?.startsWith("image/")
    ? "image"
    : mime?.startsWith("audio/")
      ? a.duration_secs !== undefined
        ? "voice"
        : "audio"
      : mime?.startsWith("video/")
        ? "video"
        : "document";
  return { kind, name: a.filename ?? null, mime, size: a.size ?? null, seconds: a.duration_secs ?? null, ref: a.url ?? "" };
}

/** The answer to an autocomplete: type 8 with at most 25 choices. */
function choicesResponse(choices: readonly Choice[]): Response {
  const data = { choices: choices.slice(0, 25).map((c) => ({ name: c.name.slice(0, 100), value: c.value.slice(0, 100) })) };
  return Response.json({ type: InteractionResponseType.APPLICATION_COMMAND_AUTOCOMPLETE_RESULT, data });
}

/** What the interaction's user is typing into `/resume session:…` (other commands offer nothing). */
function suggest(i: DiscordInteraction, user: DiscordUser | undefined): Ingest {
  const name = i.data?.name ?? "";
  const focused = i.data?.options?.find((o) => o.focused);
  const command = isCommandName(name) && focused?.name === ARG_OPTION[name] ? name : null;
  if (!command || !focused) return { kind: "respond", response: choicesResponse([]) };
  const query = typeof focused.value === "string" ? focused.value : String(focused.value ?? "");
  return { kind: "suggest", request: { command, query, source: user && !user.bot ? discordSource(i, user) : null, respond: choicesResponse } };
}

/** Who settings say this application is, for interactions that do not carry its id. */
export interface DiscordAppIdentity {
  applicationId: string;
}

/**
 * Parses an interaction: PING → PONG; autocomplete → choices (type 8); our slash commands
 * and the "Ask hermes" message command → events; anything else (components, modals, user
 * commands, commands we do not register, unknown option shapes, an interaction without a
 * user) gets a clear ephemeral answer, never a turn.
 */
export function parseDiscordInteraction(body: string, app: DiscordAppIdentity = { applicationId: "" }): Ingest {
  const checked = checkJson(body, DiscordInteraction);
  // Discord does not retry interactions: a malformed one is answered 400 (and logged).
  if (!checked.ok)
    return {
      kind: "respond",
      response: Response.json({ error: { code: "bad_request", message: checked.reason } }, { status: 400 }),
      malformed: checked.reason,
    };
  const i = checked.value;
  const user = i.member?.user ?? i.user;
  if (i.type === InteractionType.PING) return { kind: "respond", response: Response.json({ type: InteractionResponseType.PONG }) };
  if (i.type === InteractionType.APPLICATION_COMMAND_AUTOCOMPLETE) return suggest(i, user);
  if (i.type !== InteractionType.APPLICATION_COMMAND) return { kind: "respond", response: ephemeral("This interaction is not supported here; use /ask.") };
  if (!user) return { kind: "respond", response: ephemeral("Discord did not say who sent this, so it cannot be answered.") };
  if (user.bot) return { kind: "respond", response: ephemeral("Bots cannot use this bot.") };
  const applicationId = i.application_id ?? app.applicationId;
  if (!i.id || !i.token || !applicationId) return { kind: "respond", response: ephemeral("This interaction carries no id or token to answer it by.") };
  const name = i.data?.name ?? "";
  const source = discordSource(i, user);
  const interaction = { applicationId, token: i.token };
  const target = discordTarget(source.threadId ?? source.chatId, source.threadId ?? null, source.chatType === "dm", interaction);
  if (!discordTargets.decode(target))
    return {
      kind: "respond",
      response: Response.json({ error: { code: "bad_request", message: "the interaction's channel or token cannot be answered" } }, { status: 400 }),
      malformed: "channel or token the target codec refuses",
    };
  const base = { deliveryId: i.id, messageId: i.id, source, target, addressed: true as const };

  if (i.data?.type === MESSAGE_COMMAND && name === ASK_MESSAGE_COMMAND) {
    const m = i.data.target_id ? i.data.resolved?.messages?.[i.data.target_id] : undefined;
    if (!m) return { kind: "respond", response: ephemeral("That message could not be read.") };
    const attachments = (m.attachments ?? []).map(attachment).filter((a) => a.ref !== "");
    if (!m.content?.trim() && attachments.length === 0) return { kind: "respond", response: ephemeral("That message has nothing to ask about.") };
    return { kind: "event", event: { ...base, kind: "message", text: m.content ?? "", attachments, bindsThread: false } };
  }
  if (i.data?.type !== undefined && i.data.type !== CHAT_INPUT)
    return { kind: "respond", response: ephemeral(`"${name}" is not a command of this bot; try /ask or /help.`) };
  const options = i.data?.options ?? [];
  if (!isCommandName(name) && name !== "ask")
    return {
      kind: "respond",
      response: ephemeral(`/${name} is not a command of this bot (it may be left over from an older setup): use /ask, or /help for the list.`),
    };
  if (options.some((o) => o.options !== undefined))
    return {
      kind: "respond",
      response: ephemeral(`/${name} has options this bot does not know; re-register its commands with \`hermes-edge setup discord\`.`),
    };
  const option = (n: string) => {
    const v = options.find((o) => o.name === n)?.value;
    return typeof v === "string" ? v : "";
  };
  if (name === "ask") {
    const fileId = options.find((o) => o.type === ATTACHMENT_OPTION)?.value;
    const file = typeof fileId === "string" ? i.data?.resolved?.attachments?.[fileId] : undefined;
    const attachments = file ? [attachment(file)].filter((a) => a.ref !== "") : [];
    const text = option("prompt");
    if (text.trim() === "" && attachments.length === 0) return { kind: "respond", response: ephemeral("Give /ask a prompt.") };
    return { kind: "event", event: { ...base, kind: "message", text, attachments, bindsThread: false } };
  }
  return { kind: "event", event: { ...base, kind: "command", name: name as CommandName, args: ARG_OPTION[name] ? option(ARG_OPTION[name]) : "" } };
}

/** "Thinking…", answered later by editing it; ephemeral for command answers (nobody else's business). */
export function deferredResponse(opts: { ephemeral: boolean }): Response {
  return Response.json({
    type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
    ...(opts.ephemeral ? { data: { flags: InteractionResponseFlags.EPHEMERAL } } : {}),
  });
}
