import { and, desc, eq, lt, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { allOf, anyOf } from "./conditions.ts";
import { sessions, type SessionRow } from "./schema.ts";

/** Where a page of the session list ends: the last session shown (its activity time and id). */
export interface ListCursor {
  at: number;
  id: string;
}

/** `<last_active_at>:<id>`, as the API hands it out in `next`. */
export function encodeCursor(row: Pick<SessionRow, "lastActiveAt" | "id">): string {
  return `${row.lastActiveAt}:${row.id}`;
}

export function decodeCursor(raw: string): ListCursor | null {
  const [, at, id] = /^(\d{1,16}):(.{1,200})$/.exec(raw) ?? [];
  return at !== undefined && id !== undefined ? { at: Number(at), id } : null;
}

/** Newest first: most recently active, then the newest id; after `before` when paging; `q` matches part of the title or id. */
export async function listSessions(
  d: Db,
  opts: { limit: number; source?: string | undefined; q?: string | undefined; before?: ListCursor | undefined },
): Promise<SessionRow[]> {
  const where: SQL[] = [];
  if (opts.source) where.push(eq(sessions.source, opts.source));
  // instr(), not LIKE: no wildcards to escape, and no D1 limit on the pattern's length.
  if (opts.q)
    where.push(anyOf(sql`instr(lower(coalesce(${sessions.title}, '')), lower(${opts.q})) > 0`, sql`instr(lower(${sessions.id}), lower(${opts.q})) > 0`));
  if (opts.before)
    where.push(anyOf(lt(sessions.lastActiveAt, opts.before.at), allOf(eq(sessions.lastActiveAt, opts.before.at), lt(sessions.id, opts.before.id))));
  return d
    .select()
    .from(sessions)
    .where(where.length > 0 ? and(...where) : undefined)
    .orderBy(desc(sessions.lastActiveAt), desc(sessions.id))
    .limit(opts.limit);
}

/** Result of resolving a user's reference to a session. */
export type Resolved = { kind: "found"; session: SessionRow } | { kind: "none" } | { kind: "ambiguous"; matches: SessionRow[] };

/** Longest reference looked up at all (ids are 22 characters, titles at most 200). */
export const MAX_REF_LENGTH = 200;
/** D1 refuses LIKE patterns over 50 bytes; longer prefixes are matched exactly only. */
const MAX_LIKE_BYTES = 50;

/**
 * Resolves `latest`, an exact id, an exact title (the most recent one wins), or a unique id
 * prefix / title prefix. `scope` narrows the candidates (a platform user's own sessions).
 */
export async function resolveSession(d: Db, ref: string, scope?: SQL): Promise<Resolved> {
  const r = ref.trim();
  if (!r || r.length > MAX_REF_LENGTH) return { kind: "none" };
  const order = [desc(sessions.lastActiveAt), desc(sessions.startedAt)] as const;
  const where = (c: SQL | undefined) => (scope ? and(scope, c) : c);
  if (r === "latest") {
    const row = await d
      .select()
      .from(sessions)
      .where(scope)
      .orderBy(...order)
      .limit(1)
      .get();
    return row ? { kind: "found", session: row } : { kind: "none" };
  }
  const exact = await d
    .select()
    .from(sessions)
    .where(where(or(eq(sessions.id, r), eq(sessions.title, r))))
    .orderBy(...order)
    .limit(1)
    .get();
  if (exact) return { kind: "found", session: exact };
  // LIKE has no escape character unless told so: without ESCAPE the backslashes would be
  // taken literally, and no id (they all contain "_") would ever match a prefix.
  const pattern = `${r.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  if (new TextEncoder().encode(pattern).length > MAX_LIKE_BYTES) return { kind: "none" };
  const startsWith = (col: typeof sessions.id | typeof sessions.title) => sql`${col} LIKE ${pattern} ESCAPE '\\'`;
  const matches = await d
    .select()
    .from(sessions)
    .where(where(or(startsWith(sessions.id), startsWith(sessions.title))))
    .orderBy(...order)
    .limit(5);
  const [only] = matches;
  if (matches.length === 1 && only) return { kind: "found", session: only };
  return matches.length === 0 ? { kind: "none" } : { kind: "ambiguous", matches };
}
