import { eq } from "drizzle-orm";
import type { Db } from "./client.ts";
import { homeChannels } from "./schema.ts";

/** A platform's home channel as stored by /sethome. */
export interface StoredHome {
  chatId: string;
  threadId: string | null;
  chatName: string | null;
  setBy: string | null;
  updatedAt: number;
}

export async function storedHome(d: Db, platform: string): Promise<StoredHome | null> {
  const row = await d.select().from(homeChannels).where(eq(homeChannels.platform, platform)).get();
  return row ? { chatId: row.chatId, threadId: row.threadId, chatName: row.chatName, setBy: row.setBy, updatedAt: row.updatedAt } : null;
}

export async function setHome(d: Db, platform: string, home: Omit<StoredHome, "updatedAt">, now = Date.now()): Promise<void> {
  await d
    .insert(homeChannels)
    .values({ platform, ...home, updatedAt: now })
    .onConflictDoUpdate({ target: homeChannels.platform, set: { ...home, updatedAt: now } });
}
