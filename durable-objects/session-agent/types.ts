import type { SessionSeed } from "../../workers/conversations/sessions.ts";
import type { ReplyTarget } from "../../workers/platforms/types.ts";

/**
 * The one "not found" of the session object's methods: no session by this object's name
 * (never created, or deleted). Every method that needs its session answers `Found<T>`.
 */
export type NotFound = { ok: false; code: "not_found" };
export const NOT_FOUND: NotFound = { ok: false, code: "not_found" };

/** The answer of a method that needs its session: `{ ok: true, …T }`, or {@link NotFound}. */
export type Found<T extends object = object> = ({ ok: true } & T) | NotFound;

/** Outcome of asking for an API turn. The stream is server-sent events (see SseSink). */
export type StartTurnResult =
  | { ok: true; turnId: string; stream: ReadableStream<Uint8Array> }
  | NotFound
  | { ok: false; code: "turn_in_progress" | "handoff_in_flight"; message: string };

/** A platform message (or an internal one) for this session, from its Inbox. */
export interface EnqueueInput {
  content: string;
  target: ReplyTarget;
  /** `<platform>:<delivery id>`: the same key twice is one turn. */
  deliveryKey: string;
  /** How to create the session: given only with an id its Inbox has just made up (so D1 cannot have it). */
  seed?: SessionSeed;
  meta?: Record<string, unknown>;
}

/** `accepted: false`: this delivery key was taken before (a redelivery), nothing was added. */
/** `exists`: a seed came with an id this object already holds a session under (a collision): the Inbox draws another. */
export type EnqueueResult = Found<{ accepted: boolean }> | { ok: false; code: "exists" };

/** A handoff request's answer: queued (and where to), or why not. */
export type HandoffAnswer =
  | { ok: true; to: string }
  | NotFound
  | { ok: false; code: "turn_in_progress" | "handoff_in_flight" }
  | { ok: false; code: "no_home_channel" | "no_direct_chat"; message: string };

/** How long a turn may go without the object proving it is alive before recovery kicks in. */
export const WATCHDOG_MS = 30_000;
/**
 * A turn's messages and the session row reach D1 in one copy when the turn ends (when more
 * turns wait behind it, with the last of them); a turn, or a burst, that runs (or waits) longer
 * than this copies what it has so far after this long, then again at its end.
 */
export const FIRST_COPY_DELAY_MS = 2_000;
/** How long an API turn's start waits for its model request to go out before answering anyway. */
export const TURN_SEND_WAIT_MS = 1_000;
/** A failed copy to D1 is tried again after this long. */
export const MIRROR_RETRY_MS = 5_000;

/** A part the session object makes once its session row exists: reaching it before that is a bug, said as such. */
export function loaded<T>(part: T | null, what: string): T {
  if (part === null) throw new Error(`session object: its ${what} was used before the session was loaded`);
  return part;
}
