import type { Usage } from "../agent/index.ts";
import { execIn, migrate, type ComponentSchema, num, type Sql, SessionRows } from "./sql.ts";

/** One turn's tokens, as usage reports count them. */
export interface TurnUsage {
  turnId: string;
  session: string;
  /** `<platform>:<user id>`, or `cli` for API turns. */
  userKey: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  input: number;
  output: number;
  createdAt: number;
}

const SCHEMA = [
  `CREATE TABLE usage_turns (turn_id TEXT PRIMARY KEY, session TEXT NOT NULL, user_key TEXT NOT NULL, day TEXT NOT NULL, input INTEGER NOT NULL, output INTEGER NOT NULL, created_at INTEGER NOT NULL, synced INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX usage_unsynced ON usage_turns (synced) WHERE synced = 0`,
];

/** The UTC day of a time, YYYY-MM-DD. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * Tokens per turn (from the provider's `usage`, or estimated when it reports none), kept by
 * the runtime the same way at the edge and on a gateway; the edge copies them to D1.
 */
export class UsageStore extends SessionRows {
  static readonly schema: ComponentSchema = ["usage", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  record(turnId: string, userKey: string, usage: Usage, at: number): void {
    this.sql.exec(
      "INSERT INTO usage_turns (turn_id, session, user_key, day, input, output, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(turn_id) DO UPDATE SET input = excluded.input, output = excluded.output, synced = 0",
      turnId,
      this.session,
      userKey,
      utcDay(at),
      usage.input,
      usage.output,
      at,
    );
  }

  /** Tokens (in and out) a platform user (`platform:id`) used on a UTC day, over every session in this storage. */
  static usedOn(sql: Sql, userKey: string, day: string): number {
    return num(sql.exec("SELECT COALESCE(SUM(input + output), 0) AS n FROM usage_turns WHERE user_key = ? AND day = ?", userKey, day)[0]?.n);
  }

  /** This session's totals. */
  totals(): Usage & { turns: number } {
    const r = this.sql.exec(
      "SELECT COUNT(*) AS turns, COALESCE(SUM(input), 0) AS i, COALESCE(SUM(output), 0) AS o FROM usage_turns WHERE session = ?",
      this.session,
    )[0];
    return { turns: num(r?.turns), input: num(r?.i), output: num(r?.o) };
  }

  unsynced(limit = 200): TurnUsage[] {
    return this.#rows("SELECT * FROM usage_turns WHERE session = ? AND synced = 0 LIMIT ?", limit);
  }

  /** Every turn's usage, oldest first (exports). */
  all(): TurnUsage[] {
    return this.#rows("SELECT * FROM usage_turns WHERE session = ? ORDER BY created_at LIMIT ?", 1_000_000);
  }

  #rows(query: string, limit: number): TurnUsage[] {
    return this.sql.exec(query, this.session, limit).map((r) => ({
      turnId: String(r.turn_id),
      session: String(r.session),
      userKey: String(r.user_key),
      day: String(r.day),
      input: num(r.input),
      output: num(r.output),
      createdAt: num(r.created_at),
    }));
  }

  markSynced(turnIds: readonly string[]): void {
    execIn(this.sql, "UPDATE usage_turns SET synced = 1", "turn_id", turnIds);
  }
}
