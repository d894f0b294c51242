import { and, desc, gte, lte, sql, sum, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { personKeysSql } from "./people.ts";
import { sessions, usage } from "./schema.ts";

/** One row of a usage report. */
export interface UsageRow {
  key: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  /** `group=session` only: the session's title (null: untitled, or deleted). */
  title?: string | null;
}

/** Turns and tokens per session, platform user or UTC day, between two days (inclusive). */
export async function usageReport(d: Db, group: "session" | "user" | "day", since?: string, until?: string): Promise<UsageRow[]> {
  const col = group === "session" ? usage.sessionId : group === "user" ? usage.userKey : usage.day;
  const where: SQL[] = [];
  if (since) where.push(gte(usage.day, since));
  if (until) where.push(lte(usage.day, until));
  const rows = await d
    .select({
      key: col,
      turns: sql<number>`COUNT(*)`,
      input: sum(usage.inputTokens),
      output: sum(usage.outputTokens),
      title: group === "session" ? sql<string | null>`(SELECT ${sessions.title} FROM ${sessions} WHERE ${sessions.id} = ${usage.sessionId})` : sql<null>`NULL`,
    })
    .from(usage)
    .where(where.length > 0 ? and(...where) : undefined)
    .groupBy(col)
    .orderBy(group === "day" ? desc(usage.day) : desc(sql`SUM(${usage.inputTokens}) + SUM(${usage.outputTokens})`))
    .limit(1000);
  return rows.map((r) => ({
    key: r.key,
    turns: Number(r.turns),
    input_tokens: Number(r.input ?? 0),
    output_tokens: Number(r.output ?? 0),
    ...(group === "session" ? { title: r.title ?? null } : {}),
  }));
}

/** Tokens a platform user, with every account linked to it, used on one UTC day (for `DAILY_TOKEN_BUDGET`). */
export async function usedToday(d1: D1Database, userKey: string, day: string): Promise<number> {
  const row = await d1
    .prepare(`SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS total FROM usage WHERE user_key IN ${personKeysSql("?1")} AND day = ?2`)
    .bind(userKey, day)
    .first<{ total: number }>();
  return Number(row?.total ?? 0);
}
