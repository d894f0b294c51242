import type { Db } from "../../workers/db/client.ts";
import { messagesUpsert, sessionUpsert } from "../../workers/db/mirror.ts";
import type { Sql, SqlTranscript } from "../../workers/runtime/index.ts";
import { withCounters, type RecordStore, type SessionRecord } from "./record.ts";

/** Transcript rows copied per D1 batch. */
const BATCH = 100;

/**
 * Copies the session's row and new transcript rows to D1, behind the object's own storage
 * (which turns are served from): never on the way to a turn's first token. Copies are
 * serialised and idempotent; a failed copy is retried by the object's alarm.
 */
export class D1Mirror {
  readonly #db: () => Db;
  readonly #sql: Sql;
  readonly #records: RecordStore;
  readonly #transcript: () => SqlTranscript | null;
  readonly #onFailure: (err: unknown) => void;
  #chain: Promise<void> = Promise.resolve();
  #queued = false;

  constructor(opts: { db: () => Db; sql: Sql; records: RecordStore; transcript: () => SqlTranscript | null; onFailure: (err: unknown) => void }) {
    this.#db = opts.db;
    this.#sql = opts.sql;
    this.#records = opts.records;
    this.#transcript = opts.transcript;
    this.#onFailure = opts.onFailure;
  }

  /** Is anything waiting to be copied? */
  pending(): boolean {
    const t = this.#transcript();
    return this.#records.dirty() || (t !== null && t.unsynced(1).length > 0);
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
    const t = this.#transcript();
    if (!rec || !t) return;
    for (;;) {
      const rows = t.unsynced(BATCH);
      const dirty = this.#records.dirty();
      if (rows.length === 0 && !dirty) return;
      const row: SessionRecord = withCounters(this.#sql, this.#records.get()!);
      const { handoffDestKey: _k, handoffTurnId: _t, ...d1row } = row;
      const d = this.#db();
      if (rows.length > 0) await d.batch([sessionUpsert(d, d1row), messagesUpsert(d, rec.id, rows)]);
      else await sessionUpsert(d, d1row).run();
      t.markSynced(rows.map((r) => r.id));
      this.#records.markClean(this.#records.get()!);
      if (rows.length < BATCH) return;
    }
  }
}
