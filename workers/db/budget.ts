import { personKeysSql } from "./people.ts";

/**
 * `DAILY_TOKEN_BUDGET` across every session of a user (of a person: every account linked to
 * the user's counts, workers/db/people.ts): a platform turn reserves tokens in
 * D1 when it starts, by one conditional statement (D1 runs statements one at a time, so two
 * sessions of one user cannot both take the last of the day), and settles the reservation
 * with its real usage when it ends. A reservation counts until the turn's `usage` row
 * reaches D1 (the session's copy runs behind the turn) or, for a turn that died, until it
 * expires.
 */

/** A running turn's reservation stops counting after this long (a turn that died holds none for longer). */
export const RESERVATION_TTL_MS = 30 * 60_000;

export interface Reservation {
  turnId: string;
  sessionId: string;
  userKey: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  budget: number;
  /**
   * Tokens the turn holds while it runs: the caller passes one full request
   * (`LLM_CONTEXT_TOKENS`, reply included); more is held when the user's largest turn today
   * (tool rounds) was larger.
   */
  reserve: number;
  now: number;
}

/** Every account of `?2`'s person: a person's budget counts all their linked accounts. */
const PERSON = personKeysSql("?2");

/** What counts against `?2` (user, and the accounts linked to it) on `?3` (day) at `?6` (now), leaving out reservation `?4`/`?1` (session/turn). */
const HELD = `(SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM usage WHERE user_key IN ${PERSON} AND day = ?3)
  + (SELECT COALESCE(SUM(r.tokens), 0) FROM budget_reservations r WHERE r.user_key IN ${PERSON} AND r.day = ?3 AND r.expires_at > ?6
     AND NOT (r.session_id = ?4 AND r.turn_id = ?1)
     AND NOT EXISTS (SELECT 1 FROM usage u WHERE u.turn_id = r.turn_id AND u.session_id = r.session_id))`;

/**
 * Reserves tokens for a starting turn if its user's recorded usage plus what their running
 * turns hold is below the budget; else returns that total (the turn must not run). A turn
 * run again after a crash replaces its own reservation.
 */
export async function reserveTurn(d1: D1Database, r: Reservation): Promise<{ ok: true } | { ok: false; used: number; held: number }> {
  const args = [r.turnId, r.userKey, r.day, r.sessionId, r.reserve, r.now, r.budget, r.now + RESERVATION_TTL_MS];
  const taken = await d1
    .prepare(
      `INSERT INTO budget_reservations (turn_id, user_key, day, session_id, tokens, expires_at)
       SELECT ?1, ?2, ?3, ?4, MAX(?5, (SELECT COALESCE(MAX(input_tokens + output_tokens), 0) FROM usage WHERE user_key IN ${PERSON} AND day = ?3)), ?8
       WHERE ${HELD} < ?7
       ON CONFLICT(session_id, turn_id) DO UPDATE SET tokens = excluded.tokens, expires_at = excluded.expires_at
       RETURNING turn_id`,
    )
    .bind(...args)
    .first();
  if (taken) return { ok: true };
  const held = await d1
    .prepare(`SELECT ${HELD} AS n, (SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM usage WHERE user_key IN ${PERSON} AND day = ?3) AS used`)
    .bind(...args.slice(0, 6))
    .first<{ n: number; used: number }>();
  return { ok: false, used: Number(held?.used ?? r.budget), held: Number(held?.n ?? r.budget) };
}

/**
 * A turn ended having used `tokens`: its reservation now holds exactly that until the
 * usage row reaches D1 (then it no longer counts), and is dropped at the end of the day.
 */
export async function settleTurn(d1: D1Database, r: { turnId: string; sessionId: string; tokens: number; now: number }): Promise<void> {
  await d1.batch([
    d1
      .prepare("UPDATE budget_reservations SET tokens = ?1, expires_at = ?2 WHERE session_id = ?3 AND turn_id = ?4")
      .bind(r.tokens, r.now + 2 * 24 * 60 * 60_000, r.sessionId, r.turnId),
    d1.prepare("DELETE FROM budget_reservations WHERE expires_at < ?1").bind(r.now - 24 * 60 * 60_000),
  ]);
}
