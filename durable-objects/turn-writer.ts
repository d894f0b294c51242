import type { ChatMessage, Usage } from "../workers/agent/index.ts";
import type { Db } from "../workers/db/client.ts";
import { appendMessages, type PendingMessage } from "../workers/db/messages.ts";

const RETRIES = [100, 400];

/**
 * Writes one turn's messages to D1 in as few batches as possible, always in order. The
 * first write also raises the session's running flag; the final one lowers it. A failed
 * write keeps its messages for the next attempt, so nothing is dropped or reordered.
 */
export class TurnWriter {
  readonly #d: Db;
  readonly #sessionId: string;
  readonly #turnId: string;
  readonly #sleep: (ms: number) => Promise<void>;
  #pending: PendingMessage[] = [];
  #chain: Promise<void> = Promise.resolve();
  #flagRaised = false;

  constructor(d: Db, sessionId: string, turnId: string, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))) {
    this.#d = d;
    this.#sessionId = sessionId;
    this.#turnId = turnId;
    this.#sleep = sleep;
  }

  /** Queues a message; nothing is written until {@link flush}. */
  add(message: ChatMessage, usage?: Usage): void {
    this.#pending.push({ message, meta: { turnId: this.#turnId, usage }, at: Date.now() });
  }

  /** Writes everything queued so far. `final` also clears the running flag. */
  flush(final = false): Promise<void> {
    const run = async () => {
      const items = this.#pending.splice(0);
      const patch = final
        ? { activeTurnId: null, turnStartedAt: null }
        : this.#flagRaised
          ? {}
          : { activeTurnId: this.#turnId, turnStartedAt: items[0]?.at ?? Date.now() };
      if (items.length === 0 && Object.keys(patch).length === 0) return;
      try {
        for (let attempt = 0; ; attempt++) {
          try {
            await appendMessages(this.#d, this.#sessionId, items, patch);
            break;
          } catch (err) {
            if (attempt >= RETRIES.length) throw err;
            await this.#sleep(RETRIES[attempt]!);
          }
        }
        if (!final) this.#flagRaised = true;
      } catch (err) {
        this.#pending.unshift(...items);
        throw err;
      }
    };
    const p = this.#chain.then(run, run);
    this.#chain = p.catch(() => undefined);
    return p;
  }
}
