import { backoffDelay, isRetryable, retryAfterMs, type BackoffPolicy } from "../retry/index.ts";
import { describe, replyKey, type ReplyChannel } from "./channel.ts";
import { sleepOn, type Clock } from "./clock.ts";
import type { DeliveryStore, PendingDelivery } from "./deliveries.ts";
import { UNDELIVERED_NOTE } from "./texts.ts";

/** Attempts at a final reply before it is given up (and the user told in a new message). */
export const MAX_DELIVERY_ATTEMPTS = 6;
/** Longest backoff between two attempts when the platform gave no retry_after. */
export const MAX_DELIVERY_BACKOFF_MS = 30_000;
/** 1 s, 2 s, 4 s … up to the cap, jittered so replies that failed together (a platform outage) do not retry together. */
const DELIVERY_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: MAX_DELIVERY_BACKOFF_MS, jitter: "equal" };

/** How a delivery attempt run ended. */
export type DeliveryEnd = "delivered" | "deferred" | "failed";

/** The end, and the platform's last refusal when it failed. */
export interface DeliveryOutcome {
  end: DeliveryEnd;
  error: string | null;
}

export interface DeliverOptions {
  clock: Clock;
  store: DeliveryStore;
  log: (line: string) => void;
  /**
   * Called instead of waiting in memory when the next attempt is more than
   * `deferAfterMs` away (a Durable Object sets an alarm; the record stays stored).
   */
  defer?: (at: number) => void;
  deferAfterMs?: number;
  /** Persists which messages show the reply (a re-run edits them). */
  onShown?: (ids: readonly string[]) => void;
}

/**
 * Delivers a final reply that is already stored as pending: edits (or posts) until the
 * platform confirms, with backoff that honours `retry_after`, up to
 * {@link MAX_DELIVERY_ATTEMPTS}. A refusal that will not change (401, 403, 404, a bad
 * request) ends the attempts at once. A reply that cannot be finished where it streamed
 * is posted as a new message with a note; if even that fails, one log line says so. The
 * pending record is removed only when this is settled, so a crash at any point resumes.
 */
export async function deliverFinal(channel: ReplyChannel, pending: PendingDelivery, o: DeliverOptions): Promise<DeliveryOutcome> {
  let { ids, attempts } = pending;
  let notBefore = pending.notBefore;
  let last: unknown = null;
  while (attempts < MAX_DELIVERY_ATTEMPTS) {
    const wait = notBefore - o.clock.now();
    if (wait > 0 && o.defer && wait > (o.deferAfterMs ?? MAX_DELIVERY_BACKOFF_MS)) {
      o.store.retryLater(pending.turnId, ids, attempts, notBefore);
      o.defer(notBefore);
      return { end: "deferred", error: null };
    }
    await sleepOn(o.clock, wait);
    attempts++;
    try {
      const shown = await channel.show(pending.text, ids, "final", replyKey(pending.turnId));
      if (shown.ids.join() !== ids.join()) o.onShown?.(shown.ids);
      o.store.done(pending.turnId);
      return { end: "delivered", error: null };
    } catch (err) {
      last = err;
      if (!isRetryable(err)) break;
      notBefore = o.clock.now() + (retryAfterMs(err) ?? backoffDelay(attempts - 1, DELIVERY_BACKOFF));
      o.store.retryLater(pending.turnId, ids, attempts, notBefore);
    }
  }
  o.log(`the reply of turn ${pending.turnId} could not be delivered after ${attempts} attempt(s) (${describe(last)}); posting it as a new message`);
  try {
    await channel.post(ids.length > 0 ? `${UNDELIVERED_NOTE}\n\n${pending.text}` : pending.text);
  } catch (err) {
    o.log(`the reply of turn ${pending.turnId} is lost on the platform (${describe(err)}); it is kept in the transcript`);
  }
  o.store.done(pending.turnId);
  return { end: "failed", error: describe(last) };
}
