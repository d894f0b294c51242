import type { ReplyTarget, SessionSource } from "../../workers/platforms/types.ts";
import type { SessionRecord } from "./record.ts";

/**
 * The handoff state machine (SPEC section 4) over the session's own row: none → pending →
 * running → completed | failed. Each transition is checked and applied here, in the
 * session's object (one writer, so compare-and-set is plain code); a transition that is
 * not allowed returns null and changes nothing.
 */
export type HandoffState = "pending" | "running" | "completed" | "failed";

/** Failure reasons are kept to this many characters. */
export const HANDOFF_ERROR_MAX = 500;

/** The error a stale running handoff is failed with; it is never re-queued (a retry could deliver twice). */
export const STALE_HANDOFF_ERROR = "gateway stopped mid-handoff; re-run /handoff to try again";

/** The chat a `/handoff` was sent in: unbound from the session and told where it went, once it went. */
export interface HandoffOrigin {
  /** Its session key. */
  key: string;
  source: SessionSource;
  target: ReplyTarget;
}

/** The platform name of a handoff that parks the session for the operator's CLI (`/handoff cli`). */
export const CLI_DESTINATION = "cli";

/** What a request asks for. */
export interface HandoffRequest {
  /** A platform, or {@link CLI_DESTINATION}. */
  platform: string;
  /** An explicit destination chat; null means the platform's home channel. */
  chatId: string | null;
  /** Open a fresh thread in the destination (default), or post in the chat itself. */
  thread: boolean;
  /** A person's DM on `platform` instead: their user id there. */
  dmUser?: string | null;
  /** The chat it was asked for in (null: the CLI, console or API). */
  from?: HandoffOrigin | null;
}

/** Where a completed handoff went. */
export interface HandoffDestination {
  chatId: string;
  threadId: string | null;
  /** A web link to it, when the adapter could make one. */
  url?: string | null;
}

type Patch = Partial<SessionRecord>;

/** none/completed/failed → pending, clearing the last error and destination. */
export function request(rec: SessionRecord, req: HandoffRequest, now: number): Patch | null {
  if (rec.handoffState === "pending" || rec.handoffState === "running") return null;
  return {
    handoffState: "pending",
    handoffPlatform: req.platform,
    handoffError: null,
    handoffRequestedAt: now,
    handoffClaimedAt: null,
    handoffFinishedAt: null,
    handoffChatId: req.chatId,
    handoffThread: req.thread ? 1 : 0,
    handoffDestChatId: null,
    handoffDestThreadId: null,
    handoffDestUrl: null,
    handoffDestKey: null,
    handoffTurnId: null,
    handoffDmUser: req.dmUser ?? null,
    handoffOrigin: req.from ?? null,
    handoffFrom: req.from?.source.platform ?? null,
    handoffReleased: null,
  };
}

/** pending → running: exactly one claim wins. */
export function claim(rec: SessionRecord, now: number): Patch | null {
  return rec.handoffState === "pending" ? { handoffState: "running", handoffClaimedAt: now } : null;
}

/** running → completed, error cleared, destination recorded. */
export function complete(rec: SessionRecord, dest: HandoffDestination, now: number): Patch | null {
  if (rec.handoffState !== "running") return null;
  return {
    handoffState: "completed",
    handoffError: null,
    handoffFinishedAt: now,
    handoffDestChatId: dest.chatId,
    handoffDestThreadId: dest.threadId,
    handoffDestUrl: webUrl(dest.url),
  };
}

/** A destination link is stored only when it is http(s) (the console renders it as a link). */
export function webUrl(url: string | null | undefined): string | null {
  return url && /^https?:\/\/[^\s]+$/i.test(url) ? url : null;
}

/**
 * → failed with a reason (cut to 500 characters). `from` limits which states may fail: a
 * waiter that gives up passes ["pending"], since a claimed handoff belongs to its runner.
 */
export function fail(rec: SessionRecord, reason: string, now: number, from: readonly HandoffState[] = ["pending", "running"]): Patch | null {
  if (!rec.handoffState || !from.includes(rec.handoffState as HandoffState)) return null;
  return { handoffState: "failed", handoffError: reason.slice(0, HANDOFF_ERROR_MAX), handoffFinishedAt: now };
}

/** Is a handoff pending or running? (Turns from the API wait for it; it waits for turns.) */
export function inFlight(rec: SessionRecord | null): boolean {
  return rec?.handoffState === "pending" || rec?.handoffState === "running";
}
