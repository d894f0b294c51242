import type { TurnOutcome } from "../agent/index.ts";
import type { ReplyTarget } from "../platforms/types.ts";
import type { DeliveryStore } from "./deliveries.ts";
import { deliverFinal, type DeliveryOutcome } from "./delivery.ts";
import type { RuntimeHost, TurnResult } from "./host.ts";
import { userKeyOf, type TurnQueue, type TurnRecord } from "./queue.ts";
import { ReplyStreamer, type StreamEnd, type TurnSink } from "./reply.ts";
import { replyKey } from "./channel.ts";
import type { SentStore } from "./sent.ts";
import type { UsageStore } from "./usage.ts";

/** For turns nobody listens to any more (an API turn re-run after a restart): the result is stored. */
const detached: TurnSink = { event() {}, end() {} };

/**
 * How a session's turns end, for `SessionRuntime`: where a turn's reply streams, the usage
 * kept with it, its final reply delivered durably (again after a restart), and whoever waits
 * for the turn (a handoff) told its result.
 */
export class TurnEndings {
  readonly #h: RuntimeHost;
  readonly #queue: TurnQueue;
  readonly #deliveries: DeliveryStore;
  readonly #usage: UsageStore;
  readonly #sent: SentStore;
  #delivering = 0;
  #waiters = new Map<string, (r: TurnResult) => void>();

  constructor(host: RuntimeHost, stores: { queue: TurnQueue; deliveries: DeliveryStore; usage: UsageStore; sent: SentStore }) {
    this.#h = host;
    this.#queue = stores.queue;
    this.#deliveries = stores.deliveries;
    this.#usage = stores.usage;
    this.#sent = stores.sent;
  }

  /** A final reply is being delivered right now. */
  get delivering(): boolean {
    return this.#delivering > 0;
  }

  /** Resolves with the result of `turnId` once it ended. */
  wait(turnId: string): Promise<TurnResult> {
    return new Promise((resolve) => this.#waiters.set(turnId, resolve));
  }

  /** Tells whoever waits for `turnId` how it ended. */
  settle(turnId: string, result: TurnResult): void {
    const waiter = this.#waiters.get(turnId);
    this.#waiters.delete(turnId);
    waiter?.(result);
  }

  /** Where `rec`'s reply goes: its chat, edited as it streams, or nowhere (kept in the transcript). */
  sinkFor(rec: TurnRecord): TurnSink | ReplyStreamer {
    const channel = rec.target ? this.#h.channel(rec.target) : null;
    if (!channel || !rec.target) return detached;
    return new ReplyStreamer(channel, {
      clock: this.#h.clock,
      ids: rec.sent,
      key: replyKey(rec.turnId),
      onShown: (ids) => {
        this.#queue.recordSent(rec.turnId, ids);
        this.#sent.record(rec.turnId, ids, this.#h.clock.now());
      },
      log: (l) => this.#h.log(l),
    });
  }

  /** The turn's tokens: the provider's count, or the host's estimate when it reported none. */
  recordUsage(rec: TurnRecord, outcome: TurnOutcome): number {
    const reported = outcome.usage.input + outcome.usage.output > 0;
    const usage = reported ? outcome.usage : (this.#h.estimate?.(outcome, rec) ?? outcome.usage);
    if (usage.input + usage.output === 0) return 0;
    this.#usage.record(rec.turnId, userKeyOf(rec), usage, this.#h.clock.now());
    return usage.input + usage.output;
  }

  /** Delivers the replies still pending (a later one is left to the host's `defer`). */
  async resume(): Promise<void> {
    for (const d of this.#deliveries.all()) {
      if (d.notBefore > this.#h.clock.now() + 1000 && this.#h.defer) {
        this.#h.defer(d.notBefore);
        continue;
      }
      await this.deliver(d.turnId, d.target);
    }
  }

  async deliver(turnId: string, target: ReplyTarget): Promise<DeliveryOutcome> {
    const pending = this.#deliveries.all().find((d) => d.turnId === turnId);
    const channel = this.#h.channel(target);
    if (!pending) return { end: "delivered", error: null };
    if (!channel) {
      this.#h.log(`the reply of turn ${turnId} has nowhere to go (${target.platform} is not configured); it is kept in the transcript`);
      this.#deliveries.done(turnId);
      return { end: "failed", error: `${target.platform} is not configured` };
    }
    this.#delivering++;
    try {
      const outcome = await deliverFinal(channel, pending, {
        clock: this.#h.clock,
        store: this.#deliveries,
        log: (l) => this.#h.log(l),
        onShown: (ids) => this.#sent.record(turnId, ids, this.#h.clock.now()),
        ...(this.#h.defer ? { defer: (at: number) => this.#h.defer?.(at) } : {}),
      });
      // A reply the platform finally refused shows as undelivered, as one it reports failed later does.
      if (outcome.end === "failed") this.#sent.fail(turnId, outcome.error ?? "the platform did not take it", this.#h.clock.now());
      return outcome;
    } finally {
      this.#delivering--;
    }
  }

  /**
   * A streamed turn's end: the turn ends and its reply becomes a pending delivery in one step,
   * so nothing between can lose the reply. A reply the live updates already show in full needs none.
   */
  pendStreamed(rec: TurnRecord, target: ReplyTarget, end: StreamEnd): void {
    this.#h.sql.transaction(() => {
      const now = this.#h.clock.now();
      if (!end.shown) this.#deliveries.put({ turnId: rec.turnId, target, text: end.text, ids: end.ids, attempts: 0, notBefore: end.notBefore, createdAt: now });
      this.#queue.forget(rec, now);
    });
  }

  /** Ends a turn a dead instance left, whose last words are stored: delivers `text` (editing what it showed) and forgets it. */
  async endStored(rec: TurnRecord, outcome: TurnOutcome, text: string): Promise<void> {
    const target = rec.target;
    if (target && this.#h.channel(target)) {
      this.#h.sql.transaction(() => {
        this.#deliveries.put({ turnId: rec.turnId, target, text, ids: rec.sent, attempts: 0, notBefore: 0, createdAt: this.#h.clock.now() });
        this.#queue.forget(rec, this.#h.clock.now());
      });
      this.#h.onTurnEnd?.(rec, outcome);
      const delivery = await this.deliver(rec.turnId, target);
      this.settle(rec.turnId, { outcome, delivery });
    } else this.endUndelivered(rec, outcome);
  }

  /** Ends a turn with nothing to deliver: forgets it, tells the host and whoever waits. */
  endUndelivered(rec: TurnRecord, outcome: TurnOutcome): void {
    this.#queue.forget(rec, this.#h.clock.now());
    this.#h.onTurnEnd?.(rec, outcome);
    this.settle(rec.turnId, { outcome, delivery: null });
  }
}
