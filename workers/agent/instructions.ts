import type { ChatMessage } from "./types.ts";

/** Where the agent can be talked to. */
export type AgentPlatform = "cli" | "telegram" | "discord" | "slack";

/** What kind of conversation it is in (the session key's chat type). */
export type AgentChatType = "dm" | "group" | "channel" | "thread";

/** Where the agent is talking, for the context line. */
export interface AgentWhere {
  platform: AgentPlatform;
  /** Ignored for the CLI, which is always one person at a terminal. */
  chatType?: AgentChatType | null;
  /** The thread was opened by a handoff of a CLI session. */
  handedOffFromCli?: boolean;
}

/** What the system message is built from. */
export interface InstructionsInput {
  /** `SYSTEM_PROMPT`; unset or blank: `DEFAULT_SYSTEM_PROMPT`. */
  systemPrompt?: string | null | undefined;
  /** The session's own instructions (`/instructions`), if any. */
  sessionInstructions?: string | null | undefined;
  /** The current time (injected clock): epoch ms or a Date. Only its UTC date is used. */
  now: number | Date;
  where: AgentWhere;
}

/**
 * The built-in instructions, used when `SYSTEM_PROMPT` is unset. They promise nothing the
 * agent cannot do: no memory outside the conversation, no actions but its tools.
 */
export const DEFAULT_SYSTEM_PROMPT = [
  "You are a helpful AI assistant. People reach you from a terminal and from chat apps (Telegram, Discord, Slack), and a conversation can move between them.",
  "Be accurate and concise: lead with the answer, keep formatting light, and match the language the user writes in.",
  "When you are not sure, say so instead of guessing. Use a tool when it is the way to get the facts (for example to read a web page), and say what you found.",
  "You only know this conversation and what your tools return. You cannot take actions outside it, so never claim to have sent, scheduled or saved anything yourself.",
  "In a long conversation the earliest part may reach you as a summary: rely on it, and ask when a detail you need is missing.",
].join(" ");

/** Longest session instructions kept; the rest is cut so one session cannot crowd out the conversation. */
export const SESSION_INSTRUCTIONS_MAX_CHARS = 4000;

const PLATFORM_NAMES: Record<AgentPlatform, string> = { cli: "the hermes-edge CLI", telegram: "Telegram", discord: "Discord", slack: "Slack" };

// How each place shows a reply: the format module (workers/format) turns standard Markdown
// into each platform's own formatting, so the model writes one dialect everywhere.
const FORMATTING: Record<AgentPlatform, string> = {
  cli: "Write standard Markdown: the terminal shows it formatted.",
  telegram: "Write standard Markdown: Telegram shows it formatted (headings as bold lines, tables as monospaced text).",
  discord: "Write standard Markdown: Discord shows it formatted (tables as monospaced text).",
  slack: "Write standard Markdown: it is converted to Slack's formatting (headings as bold lines, tables as monospaced text).",
};

const CHAT_TYPES: Record<AgentChatType, string> = {
  dm: "a direct message with one person",
  group: "a group chat, where other members can read your replies",
  channel: "a channel, where other members can read your replies",
  thread: "a thread, where other members of the chat can read your replies",
};

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;

/** The context line: the current UTC date and where the conversation is happening. */
export function contextLine(now: number | Date, where: AgentWhere): string {
  const date = new Date(now);
  // The date alone, not the time: the system message then stays the same all day, which
  // keeps providers' prompt caches valid across turns.
  const parts = [`Today is ${WEEKDAYS[date.getUTCDay()]}, ${date.toISOString().slice(0, 10)} (UTC).`];
  if (where.platform === "cli") {
    parts.push("You are talking with the user in the hermes-edge CLI, in a terminal.");
  } else {
    const kind = where.chatType ? CHAT_TYPES[where.chatType] : "a chat";
    parts.push(`You are talking on ${PLATFORM_NAMES[where.platform]}, in ${kind}.`);
  }
  if (where.handedOffFromCli && where.platform !== "cli") {
    parts.push(`This conversation was handed off from the CLI: the earlier messages were written in a terminal, and the user now continues it here.`);
  }
  parts.push(FORMATTING[where.platform]);
  return parts.join(" ");
}

/**
 * The system message of a request: the instructions (`SYSTEM_PROMPT` or the default),
 * then the session's instructions if set, then the context line.
 */
export function systemMessage(input: InstructionsInput): ChatMessage {
  const prompt = input.systemPrompt?.trim() || DEFAULT_SYSTEM_PROMPT;
  const sections = [prompt];
  const own = input.sessionInstructions?.trim();
  if (own) {
    const kept = own.length > SESSION_INSTRUCTIONS_MAX_CHARS ? `${own.slice(0, SESSION_INSTRUCTIONS_MAX_CHARS)}…` : own;
    sections.push(`Instructions for this session, set by the user:\n${kept}`);
  }
  sections.push(contextLine(input.now, input.where));
  return { role: "system", content: sections.join("\n\n") };
}
