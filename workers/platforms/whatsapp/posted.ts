/**
 * WhatsApp cannot edit a message, so a reply is posted as it grows: each message id the
 * runtime keeps for it (and persists, so a re-run sees it) also says how much of the reply's
 * Markdown had been posted when it was sent, `<wamid>~<length>~<hash of that prefix>`.
 * The next show posts only what comes after.
 */

/** FNV-1a over UTF-16 units, as 8 hex digits: enough to tell that a prefix is the same text. */
function digest(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** The id kept for a message sent when `markdown`'s first `length` units were posted. */
export function tagPosted(id: string, markdown: string, length: number): string {
  return `${id}~${length}~${digest(markdown.slice(0, length))}`;
}

/**
 * How much of `markdown` the messages in `ids` already show: the length the last of them
 * recorded, if `markdown` still starts with that text; else 0 (the reply changed: all of it
 * is posted, since a repeat is better than a loss).
 */
export function postedLength(ids: readonly string[], markdown: string): number {
  const last = ids.at(-1);
  const m = last === undefined ? null : /~(\d{1,9})~([0-9a-f]{8})$/.exec(last);
  if (!m) return 0;
  const length = Number(m[1]);
  return length <= markdown.length && digest(markdown.slice(0, length)) === m[2] ? length : 0;
}
