import { eq, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { meta } from "./schema.ts";

/** Migrations recorded in wrangler's `d1_migrations` table (names with or without `.sql`). */
export async function appliedMigrations(d: Db): Promise<string[]> {
  try {
    const rows = await d.all<{ name: string }>(sql`SELECT name FROM d1_migrations ORDER BY id`);
    return rows.map((r) => r.name.replace(/\.sql$/, ""));
  } catch {
    // No table: wrangler never applied a migration to this database.
    return [];
  }
}

const CRON_KEY = "cron_last_run";

/** Records that the cron ran at `now`. */
export async function markCronRun(d: Db, now: number): Promise<void> {
  await d
    .insert(meta)
    .values({ key: CRON_KEY, value: String(now), updatedAt: now })
    .onConflictDoUpdate({ target: meta.key, set: { value: String(now), updatedAt: now } });
}

/** When the cron last ran, or null if never (or before this table existed). */
export async function cronLastRun(d: Db): Promise<number | null> {
  try {
    const row = await d.select({ value: meta.value }).from(meta).where(eq(meta.key, CRON_KEY)).get();
    return row ? Number(row.value) : null;
  } catch {
    return null;
  }
}
