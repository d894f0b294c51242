import { messagesUpsert, sessionUpsert, summaryUpsert, usageUpsert } from "../../workers/db/mirror.ts";
import { MissingRowError, type SessionRuntime, type Sql } from "../../workers/runtime/index.ts";
import { withCounters, type RecordStore, type SessionRecord } from "./record.ts";
import { FIRST_COPY_DELAY_MS } from "./types.ts";

/** Transcript rows copied per D1 batch. */
const BATCH = 100;

/**
 * Copies the session's row and new transcript rows to D1, behind the object's own storage
 * (which turns are served from): never on the way to a turn's first token. Copies are
 * serialised and idempotent; a failed copy is retried by the object's alarm.
 */
export class D1Mirror {
  readonly #d1: () => D1Database;
  readonly #sql: Sql;
  readonly #records: RecordStore;
  readonly #runtime: () => SessionRuntime | null;
  readonly #onFailure: (err: unknown) => void;
  #chain: Promise<void> = Promise.resolve();
  #queued = false;
  #soon: ReturnType<typeof setTimeout> | null = null;

  constructor(opts: { d1: () => D1Database; sql: Sql; records: RecordStore; runtime: () => SessionRuntime | null; onFailure: (err: unknown) => void }) {
    this.#d1 = opts.d1;
    this.#sql = opts.sql;
    this.#records = opts.records;
    this.#runtime = opts.runtime;
    this.#onFailure = opts.onFailure;
  }

  /** Is anything waiting to be copied? */
  pending(): boolean {
    const rt = this.#runtime();
    return this.#records.dirty() || (rt !== null && (rt.transcript.unsynced(1).length > 0 || rt.usage.unsynced(1).length > 0));
  }

  /** A copy within {@link FIRST_COPY_DELAY_MS} (a short turn's messages go with its end: one copy). */
  soon(): void {
    this.#soon ??= setTimeout(() => this.now(), FIRST_COPY_DELAY_MS);
  }

  /** A copy now (one asked for `soon` goes with it). */
  now(): void {
    if (this.#soon !== null) clearTimeout(this.#soon);
    this.#soon = null;
    void this.flush();
  }

  /** Schedules a copy (coalescing with one already queued); resolves when it ran. */
  flush(): Promise<void> {
    if (this.#queued) return this.#chain;
    this.#queued = true;
    this.#chain = this.#chain.then(async () => {
      this.#queued = false;
      try {
        await this.#copy();
      } catch (err) {
        this.#onFailure(err);
      }
    });
    return this.#chain;
  }

  async #copy(): Promise<void> {
    const rec = this.#records.get();
    const rt = this.#runtime();
    if (!rec || !rt) return;
    for (;;) {
      const rows = rt.transcript.unsynced(BATCH);
      const used = rt.usage.unsynced(BATCH);
      const dirty = this.#records.dirty();
      if (rows.length === 0 && used.length === 0 && !dirty) return;
      // The version copied: a change while D1 answers leaves the row dirty for the next copy.
      const version = this.#records.version;
      const row: SessionRecord = withCounters(this.#sql, present(this.#records));
      const { handoffDestKey: _k, handoffTurnId: _t, summary, foldedThrough, ...d1row } = row;
      const d1 = this.#d1();
      await d1.batch([
        sessionUpsert(d1, d1row),
        ...messagesUpsert(d1, rec.id, rows),
        ...usageUpsert(d1, used),
        ...(dirty && summary ? [summaryUpsert(d1, { sessionId: rec.id, summary, foldedThrough: foldedThrough ?? 0, updatedAt: Date.now() })] : []),
      ]);
      rt.transcript.markSynced(rows.map((r) => r.id));
      rt.usage.markSynced(used.map((u) => u.turnId));
      this.#records.markClean(version);
      if (rows.length < BATCH && used.length < BATCH) return;
    }
  }
}

/** The session's record, which a flush only runs with (nothing deletes it meanwhile). */
function present(records: RecordStore): SessionRecord {
  const rec = records.get();
  if (!rec) throw new MissingRowError("the session record vanished while copying it to D1");
  return rec;
}
