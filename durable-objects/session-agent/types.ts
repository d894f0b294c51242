import type { SessionSeed } from "../../workers/conversations/sessions.ts";
import type { ReplyTarget } from "../../workers/platforms/types.ts";

/** Outcome of asking for an API turn. The stream is server-sent events (see SseSink). */
export type StartTurnResult =
  | { ok: true; turnId: string; stream: ReadableStream<Uint8Array> }
  | { ok: false; code: "turn_in_progress" | "handoff_in_flight" | "not_found"; message: string };

/** A platform message (or an internal one) for this session, from its Inbox. */
export interface EnqueueInput {
  sessionId: string;
  content: string;
  target: ReplyTarget;
  /** `<platform>:<delivery id>`: the same key twice is one turn. */
  deliveryKey: string;
  /** How to create the session: given only with an id its Inbox has just made up (so D1 cannot have it). */
  seed?: SessionSeed;
  meta?: Record<string, unknown>;
}

export type EnqueueResult = { accepted: boolean; position: number; found: boolean };

export type HandoffAnswer = { ok: true } | { ok: false; code: "turn_in_progress" | "handoff_in_flight" | "not_found" };
