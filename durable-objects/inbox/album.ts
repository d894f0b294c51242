import type { Addressed, MessageEvent } from "../../workers/platforms/types.ts";
import type { OutboxItem } from "./store.ts";

/**
 * How long an Inbox waits, after an album's first part arrived, for the rest: a platform
 * that splits an album (Telegram: one message per photo) sends its parts within about a
 * second.
 */
export const ALBUM_WAIT_MS = 1_500;

/** The most parts one album has (Telegram's limit is 10). */
export const ALBUM_MAX = 10;

/** Whether an outbox item is a part of `album`. */
export function partOf(item: OutboxItem, album: string): boolean {
  return item.event.kind === "message" && item.event.album === album;
}

/**
 * The parts of one album at the head of the outbox (the first item and those after it with
 * the same album, in order), joined into the one message a person sent: every part's text
 * (the caption) and every attachment, answered where the addressed part was. Null when the
 * first item is no album.
 */
export function joinAlbum(items: readonly OutboxItem[]): { event: MessageEvent; seqs: number[] } | null {
  const head = items[0];
  if (!head || head.event.kind !== "message" || !head.event.album) return null;
  const album = head.event.album;
  const parts: MessageEvent[] = [];
  const seqs: number[] = [];
  for (const item of items) {
    if (!partOf(item, album) || item.event.kind !== "message") break;
    parts.push(item.event);
    seqs.push(item.seq);
  }
  const addressed: Addressed = parts.some((p) => p.addressed === true)
    ? true
    : (parts.find((p) => typeof p.addressed === "object")?.addressed ?? head.event.addressed);
  // Replies go where the part that spoke to the bot was (a group reply quotes that message).
  const speaker = parts.find((p) => p.addressed === true) ?? parts.find((p) => p.text.trim() !== "") ?? head.event;
  const text = parts
    .map((p) => p.text.trim())
    .filter((t) => t !== "")
    .join("\n\n");
  return { event: { ...speaker, text, attachments: parts.flatMap((p) => p.attachments), addressed, album }, seqs };
}
