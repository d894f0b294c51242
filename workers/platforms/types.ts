import type { PlatformName } from "./names.ts";

/**
 * Neutral platform types. Adapters translate their SDK's shapes into these; nothing here
 * (or in the core) imports a platform SDK.
 */

/** What kind of conversation a message belongs to. */
export type ChatType = "dm" | "group" | "channel" | "thread";

/** Where a message came from: enough to build its session key and answer it. */
export interface SessionSource {
  platform: PlatformName;
  chatType: ChatType;
  /** The chat (for threads: the parent chat, group or channel). */
  chatId: string;
  /** The thread or topic inside the chat, when there is one. */
  threadId?: string | null;
  userId: string;
  userName?: string | null;
  /** Slack workspace (team) id. */
  workspaceId?: string | null;
}

/** Where and how to deliver replies. JSON-serialisable: it is stored with queued turns. */
export interface ReplyTarget {
  platform: PlatformName;
  /** The chat to post into (for Discord threads and Slack, the channel; for Telegram, the chat). */
  chatId: string;
  threadId?: string | null;
  /** Private chats allow faster edits than groups. */
  isPrivate: boolean;
  /** The message being answered, for platforms that reply to one. */
  replyTo?: string | null;
  /** Discord: the interaction whose deferred response the reply edits. */
  interaction?: { applicationId: string; token: string } | null;
}

/** A chat command typed on a platform (`/stop`, `/resume abc`). */
export interface ChatCommand {
  name: string;
  args: string;
}

/** A verified, parsed platform message. */
export interface InboundMessage {
  /** The platform's delivery id (update_id, interaction id, event_id), for dedupe. */
  deliveryId: string;
  /** The message's own id on the platform (for replay dedupe and replies). */
  messageId: string;
  text: string;
  source: SessionSource;
  /** True when the message is for the bot: a DM, a mention, a reply to it, or a command. */
  addressed: boolean;
  command: ChatCommand | null;
  target: ReplyTarget;
}

/**
 * What a verified webhook body means. `malformed` (with why) marks a body that failed the
 * platform schema: it is logged once, and never answered with a 5xx.
 */
export type Intake =
  /** Answer this at once and do nothing else (Discord PING, Slack url_verification). */
  | { kind: "respond"; response: Response; malformed?: string }
  /** Nothing to do (unknown update type, bot message, no text): 2xx so it is not retried. */
  | { kind: "ignore"; reason: string; malformed?: string }
  | { kind: "message"; message: InboundMessage };

/** How a platform counts a message's length. */
export type LengthUnit = "utf16" | "codepoints";

export interface Capabilities {
  maxMessageLength: number;
  lengthUnit: LengthUnit;
  threads: boolean;
  edits: boolean;
  typing: boolean;
  /** Least time between two edits of a streamed reply, in ms. */
  editIntervalMs: { private: number; group: number };
}

/** A message the adapter sent. */
export interface SentMessage {
  messageId: string;
}

/** A thread made for a handoff: where its messages go and how its messages will be keyed. */
export interface HandoffThread {
  chatId: string;
  threadId: string;
}

/**
 * Whether a webhook request is genuine. A refusal says why (logged once, never with the
 * body or any secret): no credentials at all, a wrong secret or signature, or a signed
 * timestamp outside the accepted window (a replay).
 */
export type Verification = { ok: true } | { ok: false; reason: "missing" | "bad_signature" | "stale" };

/** A platform behind one interface. The SDK of each platform is imported only in its folder. */
export interface PlatformAdapter {
  readonly name: PlatformName;
  readonly capabilities: Capabilities;
  /**
   * Checks the request's secret or signature over the raw body bytes (exactly as received:
   * a body that is not valid UTF-8 is still verified as sent), in constant time where a
   * secret is compared, with signed timestamps checked against `now`. Never parses the body.
   */
  verify(headers: Headers, rawBody: Uint8Array, now: number): Promise<Verification>;
  /** Parses a verified body (decoded as UTF-8, invalid sequences replaced). */
  parse(rawBody: string, headers: Headers): Promise<Intake>;
  /** The immediate HTTP answer to an accepted message (Discord: a deferred response). */
  acknowledge(message: InboundMessage): Response;
  /** The immediate HTTP answer that carries a short reply itself, where the platform allows. */
  respondInline?(message: InboundMessage, text: string): Response | null;
  /** Posts a message. `part` is its index within one reply (Discord: part 0 edits the deferred response). */
  send(target: ReplyTarget, text: string, part?: number): Promise<SentMessage>;
  edit(target: ReplyTarget, messageId: string, text: string): Promise<void>;
  /** Shows "typing…" for a few seconds. */
  typing?(target: ReplyTarget): Promise<void>;
  /** A fresh thread under `parentChatId` for a handed-off session, or null where impossible. */
  createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null>;
  /** The source and reply target of messages in a chat or thread, as a real message there has. */
  sourceFor(chatId: string, threadId: string | null): Promise<{ source: Omit<SessionSource, "userId">; target: ReplyTarget }>;
}

/** The platform API refused a call (as opposed to the network failing). */
export class PlatformApiError extends Error {
  override readonly name = "PlatformApiError";
  readonly platform: PlatformName;
  readonly code: string;
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;

  constructor(platform: PlatformName, code: string, message: string, opts: { status?: number; retryAfter?: number } = {}) {
    super(message);
    this.platform = platform;
    this.code = code;
    this.status = opts.status;
    this.retryAfter = opts.retryAfter;
  }
}

/** Longest a platform API call may take: a hung call must not hold a session's queue. */
export const PLATFORM_TIMEOUT_MS = 15_000;

/** The stable code for an HTTP status a platform API answered with. */
export function codeForStatus(status: number): string {
  return status === 429 ? "rate_limited" : status === 401 ? "unauthorized" : status === 404 ? "not_found" : "rejected";
}

/** Runs an SDK call, turning what it throws into a {@link PlatformApiError} with `toError`. */
export async function mapErrors<T>(fn: () => Promise<T>, toError: (err: unknown) => Error): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toError(err);
  }
}
