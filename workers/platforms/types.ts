import type { Download } from "../attachments/index.ts";
import type { CommandName } from "./commands.ts";
import type { PlatformName } from "./names.ts";
import type { TargetCodec } from "./target.ts";

/**
 * Neutral platform types. Adapters translate their SDK's shapes into these; nothing here
 * (or in the core) imports a platform SDK, and nothing outside `platforms/<name>/` asks
 * which platform it is talking to.
 */

/** What kind of conversation a message belongs to. */
export type ChatType = "dm" | "group" | "channel" | "thread";

/** Where a message came from: enough to build its session key and to tell the model where it is. */
export interface SessionSource {
  platform: PlatformName;
  chatType: ChatType;
  /** The chat (for threads: the parent chat, group or channel; on Discord the thread itself). */
  chatId: string;
  /** The thread or topic inside the chat, when there is one. */
  threadId?: string | null;
  userId: string;
  /** How the user is shown (a display name). */
  userName?: string | null;
  /** The user's handle (`@name`), where the platform has one apart from the display name. */
  userHandle?: string | null;
  /** The tenant the chat belongs to (a Slack workspace), part of the session key when set. */
  scopeId?: string | null;
}

/**
 * Where replies go. Opaque outside its adapter: neutral code passes it around (stores it
 * with queued turns, sends it through the relay) and reads only `platform` and `private`
 * (private chats allow faster edits). `ref` is what the adapter encoded (chat, thread, the
 * message answered, a Discord interaction, a Slack `response_url`, …).
 */
export interface ReplyTarget {
  platform: PlatformName;
  private: boolean;
  ref: string;
}

/** The chat commands live in one table (`commands.ts`); these names are re-exported for the adapters. */
export { isCommandName, type CommandName } from "./commands.ts";

/**
 * Whether a message is for the bot. `mentions` defers the decision to after the webhook is
 * acknowledged: the adapter saw these `@names` but does not know the bot's username yet
 * (a cold Telegram isolate), so whoever processes the event checks them.
 */
export type Addressed = boolean | { mentions: string[] };

/** A file, picture or voice note that came with a message. */
export interface Attachment {
  kind: "image" | "audio" | "voice" | "video" | "document";
  name: string | null;
  mime: string | null;
  size: number | null;
  /** Length of a voice note, audio or video in seconds, when the platform says. */
  seconds?: number | null;
  /** How the adapter fetches it (a Telegram file id, a URL): opaque like targets. */
  ref: string;
}

interface EventBase {
  /** The platform's delivery id (update_id, interaction id, event_id), for dedupe. */
  deliveryId: string;
  /** The message's own id on the platform. */
  messageId: string;
  source: SessionSource;
  target: ReplyTarget;
  /** Whether it is for this bot (commands too: `/stop@otherbot` is not). */
  addressed: Addressed;
}

/** What a verified webhook says happened. */
export type PlatformEvent =
  | (EventBase & {
      kind: "message";
      text: string;
      attachments: Attachment[];
      /** This message opens a thread that should then hear every message (a Slack mention in a channel). */
      bindsThread: boolean;
      /**
       * Set when the platform delivers what a person sent at once as several messages (a
       * Telegram album: one message per photo, the caption on one of them), the same on each.
       */
      album?: string;
    })
  | (EventBase & { kind: "command"; name: CommandName; args: string })
  /** A command this bot does not know (in a DM: say so; in groups: another bot's). */
  | (EventBase & { kind: "unknown_command"; name: string });

export type MessageEvent = Extract<PlatformEvent, { kind: "message" }>;
export type CommandEvent = Extract<PlatformEvent, { kind: "command" }>;

/**
 * What a verified webhook body means. `malformed` (with why) marks a body that failed the
 * platform schema: it is logged once, and never answered with a 5xx.
 */
export type Ingest =
  /** Answer this at once and do nothing else (Discord PING, Slack url_verification, unsupported interactions). */
  | { kind: "respond"; response: Response; malformed?: string }
  /** Nothing to do (unknown update type, bot message, no text): 2xx so it is not retried. */
  | { kind: "ignore"; reason: string; malformed?: string }
  | { kind: "event"; event: PlatformEvent }
  /** An autocomplete request (Discord): answer `respond(choices)` at once, after a quick look-up. */
  | { kind: "suggest"; request: SuggestRequest }
  /**
   * A delivery that batches updates (WhatsApp: entries × changes × messages): each event is
   * taken in on its own (and exactly once, by its delivery id), each note posted once, and
   * `log` lines (a status Meta says failed, a skipped group message) logged; then 2xx.
   */
  | { kind: "batch"; events: PlatformEvent[]; notes: BatchNote[]; failures: DeliveryFailure[]; log: string[]; malformed?: string };

/** The platform did not deliver a message the bot had sent (`messageRef`, its id) to `source`'s chat. */
export interface DeliveryFailure {
  source: SessionSource;
  messageRef: string;
  reason: string;
}

/** A short answer to a message that is no turn (a type the bot cannot read), posted once per `deliveryId`. */
export interface BatchNote {
  deliveryId: string;
  source: SessionSource;
  target: ReplyTarget;
  text: string;
}

/** One choice an autocomplete offers: what shows, and the value the command then gets. */
export interface Choice {
  name: string;
  value: string;
}

/** What the user is typing into a command's argument, and how to answer it. */
export interface SuggestRequest {
  command: CommandName;
  /** What is typed so far. */
  query: string;
  /** Who is asking, where (null: the platform did not say, so nothing is offered). */
  source: SessionSource | null;
  respond(choices: readonly Choice[]): Response;
}

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

/** The words a platform's users type, for help texts. */
export interface CommandStyle {
  /** What goes before a command name: "/" or "/hermes ". */
  prefix: string;
  /** How to talk to the agent here, one line. */
  howToTalk: string;
}

/** A thread made for a handoff: where its messages go. */
export interface HandoffThread {
  chatId: string;
  threadId: string;
  /** A web link to the thread, when the platform's answer had what one needs. */
  url?: string | null;
}

/** What a show left on the platform: the messages showing the reply, and whether all of it shows. */
export interface Shown {
  ids: string[];
  /** Every part is shown (a live show of a reply longer than one message is not). */
  complete: boolean;
}

/** Whether a webhook request is genuine; a refusal says why (logged once, never with the body). */
export type Verification = { ok: true } | { ok: false; reason: "missing" | "bad_signature" | "stale" };

/** A platform behind one interface. Its SDK is imported only in its folder. */
/** Something wrong that someone can fix, and how (a command to run, a setting to change). */
export interface Problem {
  problem: string;
  fix: string;
}

/** What a platform itself says about this Worker's setup there (`hermes-edge status`). */
export interface PlatformHealth {
  /** One line of what the platform reports (the webhook URL it delivers to, the bot's team). */
  detail: string;
  problems: Problem[];
}

/** A request on a path below a platform's webhook URL (`/webhooks/<platform>/<path>`), as received. */
export interface SubRequest {
  method: string;
  /** The path below the webhook URL, with its leading `/` (`/_matrix/app/v1/transactions/42`). */
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /** The body's bytes exactly as received. */
  raw: Uint8Array;
}

/** What the Worker gives a platform that serves its own paths: the intake, and a record of deliveries done. */
export interface SubIntake {
  /** Takes a batch in as a batching webhook's is (each event stored once by its delivery id); rejects when one could not be stored. */
  take(batch: Extract<Ingest, { kind: "batch" }>): Promise<void>;
  /** Whether a delivery (a Matrix transaction id) was recorded as done. */
  done(key: string): Promise<boolean>;
  /** Records a delivery as done, once all of it is stored (the record may be written after the answer). */
  markDone(key: string): Promise<void>;
  /** Whether a user is in the platform's allowed users. */
  allowed(userId: string): boolean;
}

export interface PlatformAdapter {
  readonly name: PlatformName;
  readonly capabilities: Capabilities;
  readonly commands: CommandStyle;
  /** Its reply targets' codec: the only code that makes or reads a {@link ReplyTarget}'s `ref`. */
  readonly targets: Pick<TargetCodec<{ private: boolean }>, "platform" | "decode" | "where">;
  /**
   * Checks the request's secret or signature over the raw body bytes (exactly as received),
   * in constant time where a secret is compared, signed timestamps against `now`. Never
   * parses the body and never calls out.
   */
  verify(headers: Headers, rawBody: Uint8Array, now: number): Promise<Verification>;
  /**
   * Answers a `GET` on the webhook URL (WhatsApp's subscription check, `hub.challenge`);
   * absent where the platform sends none. Compares secrets in constant time; no I/O.
   */
  handshake?(query: URLSearchParams): Promise<Response>;
  /**
   * Answers requests on paths below the webhook URL, for a platform that calls several (a
   * Matrix homeserver: `PUT …/_matrix/app/v1/transactions/{txnId}`, `POST …/_matrix/app/v1/ping`):
   * verifies each before reading its body, hands what it delivers to `intake`, and answers once
   * it is stored. Absent: such paths are 404.
   */
  serve?(req: SubRequest, intake: SubIntake): Promise<Response>;
  /** Turns a verified body (decoded as UTF-8) into an event, or an immediate answer. No I/O. */
  ingest(body: string, headers: Headers): Ingest;
  /** The HTTP answer once an event is taken in (the reply follows by API call): 200, or Discord's deferred response. */
  ack(event: PlatformEvent): Response;
  /** The HTTP answer that carries `text` itself where the platform allows (Discord, Slack slash commands); else null. */
  answerInline(event: PlatformEvent, text: string): Response | null;
  /**
   * Shows Markdown as a reply at `target`, rendered natively and split at the platform's
   * limit: `live` shows the first part (a reply still streaming), `final` all of it.
   * Messages in `ids` are edited, further parts posted. Returns the ids now showing it.
   */
  show(target: ReplyTarget, markdown: string, ids: readonly string[], mode: "live" | "final"): Promise<Shown>;
  /** Posts a new message at `target`, never editing one (notes, refusals). */
  post(target: ReplyTarget, markdown: string): Promise<string[]>;
  /** Shows "typing…" for a few seconds. */
  typing?(target: ReplyTarget): Promise<void>;
  /**
   * May a handoff write first into `chatId` now? Asked before the handoff touches the session,
   * with when the user there last wrote to the bot (null: never, as far as this Worker
   * knows). WhatsApp: inside its 24-hour window yes; outside it, its handoff template is sent
   * (`announced`: the template is the handoff's notice, no summary turn runs), else no, with
   * the reason. Absent: always yes.
   */
  handoffGate?(chatId: string, title: string, lastInboundAt: number | null): Promise<{ ok: true; announced?: boolean } | { ok: false; reason: string }>;
  /** A fresh thread under `parentChatId` for a handed-off session, or null where impossible. */
  createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null>;
  /** The source and reply target of messages in a chat or thread, as a real message there has. */
  destination(chatId: string, threadId: string | null): Promise<{ source: Omit<SessionSource, "userId">; target: ReplyTarget }>;
  /** The chat and thread a target points at (for relay frames and logs). */
  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null };
  /**
   * The relay contract's `chat_type` for a source, where the platform's word differs from
   * ours (a Telegram forum topic is `forum`); absent: the source's own chat type.
   */
  wireChatType?(source: SessionSource): string;
  /**
   * Downloads an attachment of a message this adapter parsed, with the platform's
   * credentials, reading at most `maxBytes`. Never throws: a failure says why.
   */
  download?(attachment: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download>;
  /** Whether any of these `@names` is this bot (for events whose addressing was deferred). */
  addressedBy?(mentions: readonly string[]): Promise<boolean>;
  /** Learns what parsing will want next time (after a webhook was answered, never before). */
  warm?(): Promise<void>;
  /**
   * Asks the platform how it sees this Worker (its webhook URL against `origin`'s, errors
   * it recorded, whether the token works). Never throws: a failure is a problem.
   */
  health(origin: string): Promise<PlatformHealth>;
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

  /** Worth another attempt: the platform is rate limiting, down, or unreachable (read by the retry module's `isRetryable`). */
  get retryable(): boolean {
    return this.code === "rate_limited" || this.code === "unavailable" || this.code === "network";
  }
}

/** Longest a platform API call may take: a hung call must not hold a session's queue. */
export const PLATFORM_TIMEOUT_MS = 15_000;

/** The stable code for an HTTP status a platform API answered with. */
export function codeForStatus(status: number): string {
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 404) return "not_found";
  return status >= 500 ? "unavailable" : "rejected";
}

/** Runs an SDK call, turning what it throws into a {@link PlatformApiError} with `toError`. */
export async function mapErrors<T>(fn: () => Promise<T>, toError: (err: unknown) => Error): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toError(err);
  }
}
