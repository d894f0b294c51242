import type { ReplyTarget } from "../platforms/types.ts";
import { SeenDeliveries } from "./seen.ts";
import { MissingRowError, migrate, type ComponentSchema, num, str, type Row, type Sql, SessionRows } from "./sql.ts";

/** Where a turn came from: the HTTP API (streamed to its caller), a platform, or the runtime itself (a handoff notice). */
export type TurnOrigin = "api" | "platform" | "internal";

/** A turn accepted by a session, kept in storage until it ends (so a restart re-runs it). */
export interface TurnRecord {
  seq: number;
  turnId: string;
  session: string;
  content: string;
  origin: TurnOrigin;
  state: "queued" | "running";
  /** Executions started; a turn is re-run after a restart at most once. */
  attempts: number;
  target: ReplyTarget | null;
  /** `<platform>:<delivery id>`: the same key twice is one turn. */
  deliveryKey: string | null;
  /** Ids of the platform messages this turn's reply already showed (a re-run edits them). */
  sent: string[];
  /** Facts the host keeps with the turn (the platform user, attachments, …). */
  meta: Record<string, unknown>;
  createdAt: number;
}

/** What the queue was asked to take. */
export interface TurnInput {
  turnId: string;
  content: string;
  origin: TurnOrigin;
  state: TurnRecord["state"];
  target?: ReplyTarget | null;
  deliveryKey?: string | null;
  meta?: Record<string, unknown>;
}

const SCHEMA = [
  `CREATE TABLE turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    turn_id TEXT NOT NULL UNIQUE,
    content TEXT NOT NULL,
    origin TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    target TEXT,
    delivery_key TEXT UNIQUE,
    sent TEXT NOT NULL DEFAULT '[]',
    meta TEXT NOT NULL DEFAULT '{}',
    created_at INTEGER NOT NULL
  );
  CREATE INDEX turns_by_session ON turns (session, seq);
  CREATE TABLE seen (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL);
  CREATE INDEX seen_by_time ON seen (at)`,
];

function json<T>(v: unknown, fallback: T): T {
  if (typeof v !== "string" || v === "") return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

function record(r: Row): TurnRecord {
  return {
    seq: num(r.seq),
    turnId: String(r.turn_id),
    session: String(r.session),
    content: String(r.content),
    origin: r.origin === "api" || r.origin === "internal" ? r.origin : "platform",
    state: r.state === "queued" ? "queued" : "running",
    attempts: num(r.attempts),
    target: json<ReplyTarget | null>(r.target, null),
    deliveryKey: str(r.delivery_key),
    sent: json<string[]>(r.sent, []),
    meta: json<Record<string, unknown>>(r.meta, {}),
    createdAt: num(r.created_at),
  };
}

/**
 * The durable turn queue of one session: one table of accepted turns, in order, and one of
 * delivery keys already taken in (so a redelivery is no second turn, even after its turn
 * ended). Synchronous: a turn is stored the moment `add` returns.
 */
export class TurnQueue extends SessionRows {
  readonly #seen = new SeenDeliveries(this.sql, "seen");
  /**
   * This session's turns as stored, oldest first (undefined: not read yet). The runtime
   * that owns the session is the only writer of its rows, so they are written through and
   * read from memory: a delivery asks for them several times on its way through.
   */
  #turns: TurnRecord[] | undefined;

  /** Creates or upgrades the tables (once per storage). */
  static readonly schema: ComponentSchema = ["turn-queue", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  /** Sessions with turns in this storage (a gateway resumes each after a restart). */
  static sessionsWithWork(sql: Sql): string[] {
    return sql.exec("SELECT DISTINCT session FROM turns").map((r) => String(r.session));
  }

  #rows(): TurnRecord[] {
    this.#turns ??= this.sql.exec("SELECT * FROM turns WHERE session = ? ORDER BY seq", this.session).map(record);
    return this.#turns;
  }

  /** Stores a turn unless its delivery key was taken before; returns its place, or null for a duplicate. */
  add(input: TurnInput, now: number): { position: number } | null {
    const key = input.deliveryKey ?? null;
    if (key !== null && this.#seen.has(key)) return null;
    const rows = this.#rows();
    const position = rows.length;
    const target = input.target ? JSON.stringify(input.target) : null;
    const meta = JSON.stringify(input.meta ?? {});
    const attempts = input.state === "running" ? 1 : 0;
    // A key still queued or running here (or in another session of this storage) is a duplicate too.
    const row = this.sql.exec(
      "INSERT INTO turns (session, turn_id, content, origin, state, attempts, target, delivery_key, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(delivery_key) DO NOTHING RETURNING seq",
      this.session,
      input.turnId,
      input.content,
      input.origin,
      input.state,
      attempts,
      target,
      key,
      meta,
      now,
    )[0];
    if (!row) return null;
    rows.push(
      record({
        seq: row.seq ?? null,
        turn_id: input.turnId,
        session: this.session,
        content: input.content,
        origin: input.origin,
        state: input.state,
        attempts,
        target,
        delivery_key: key,
        sent: "[]",
        meta,
        created_at: now,
      }),
    );
    return { position };
  }

  /** Was this delivery key taken in already (queued, running or finished)? */
  seen(deliveryKey: string): boolean {
    return this.sql.exec("SELECT 1 AS x FROM turns WHERE delivery_key = ?", deliveryKey).length > 0 || this.#seen.has(deliveryKey);
  }

  /** This session's turns, oldest first (optionally of one state). */
  all(state?: TurnRecord["state"]): TurnRecord[] {
    return this.#rows()
      .filter((r) => state === undefined || r.state === state)
      .map(copy);
  }

  get(turnId: string): TurnRecord | null {
    const mine = this.#rows().find((r) => r.turnId === turnId);
    if (mine) return copy(mine);
    const row = this.sql.exec("SELECT * FROM turns WHERE turn_id = ?", turnId)[0];
    return row ? record(row) : null;
  }

  /** queued → running (first attempt), or one more attempt of a turn left running. */
  start(turnId: string): TurnRecord {
    this.sql.exec("UPDATE turns SET state = 'running', attempts = attempts + 1 WHERE turn_id = ?", turnId);
    const mine = this.#rows().find((r) => r.turnId === turnId);
    if (mine) {
      mine.state = "running";
      mine.attempts++;
      return copy(mine);
    }
    const rec = this.get(turnId);
    if (!rec) throw new MissingRowError(`turn ${turnId} is not in the queue: it cannot start`);
    return rec;
  }

  /** Remembers which messages the turn's reply shows, so a re-run edits instead of posting again. */
  recordSent(turnId: string, ids: readonly string[]): void {
    this.sql.exec("UPDATE turns SET sent = ? WHERE turn_id = ?", JSON.stringify(ids), turnId);
    const mine = this.#rows().find((r) => r.turnId === turnId);
    if (mine) mine.sent = [...ids];
  }

  /** Removes a turn; its delivery key is remembered, so a redelivery stays a no-op. */
  forget(rec: TurnRecord, now: number): void {
    this.sql.exec("DELETE FROM turns WHERE turn_id = ?", rec.turnId);
    if (rec.deliveryKey) this.#seen.remember(rec.deliveryKey, now);
    const rows = this.#rows();
    const at = rows.findIndex((r) => r.turnId === rec.turnId);
    if (at >= 0) rows.splice(at, 1);
  }

  /** Records a delivery key as taken in without a turn (a command handled by its host). */
  remember(deliveryKey: string, now: number): void {
    this.#seen.remember(deliveryKey, now);
  }

  /** Forgets delivery keys past their retention (`SEEN_RETENTION_MS`). */
  pruneSeen(now: number): void {
    this.#seen.prune(now);
  }
}

/** A record callers may change without changing the queue's. */
function copy(r: TurnRecord): TurnRecord {
  return { ...r, sent: [...r.sent] };
}

/** Whose turn it is, for usage: the platform user its host recorded, else the API (`cli`). */
export function userKeyOf(rec: TurnRecord): string {
  const k = rec.meta.userKey;
  return typeof k === "string" && k !== "" ? k : "cli";
}
