import type { Part } from "../parts.ts";
import { sha256Hex } from "../../security.ts";
import { matrixText } from "./html.ts";
import type { MatrixTarget } from "./target.ts";

/** Past this many bytes of JSON a message goes without its HTML (an event may not exceed 65,536 bytes). */
export const CONTENT_BYTES = 60_000;

const HTML = "org.matrix.custom.html";
const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).byteLength;

/** `m.text` with `body` and, where it fits, `formatted_body`. */
function textContent(part: Part, extra: Record<string, unknown>, htmlCost = 1): Record<string, unknown> {
  const { body, html } = matrixText(part);
  const plain = { msgtype: "m.text", body, ...extra };
  if (html === null) return plain;
  const rich = { ...plain, format: HTML, formatted_body: html };
  return bytes(rich) * htmlCost <= CONTENT_BYTES ? rich : plain;
}

/**
 * A part of a reply: the first one answers the user's message (`m.in_reply_to`), each one in
 * a thread carries the thread relation (`is_falling_back` where it quotes nothing).
 */
export function messageContent(part: Part, t: MatrixTarget, first: boolean): Record<string, unknown> {
  const reply = first && t.replyTo ? { "m.in_reply_to": { event_id: t.replyTo } } : null;
  let relates: Record<string, unknown> | null = null;
  if (t.threadRoot)
    relates = {
      rel_type: "m.thread",
      event_id: t.threadRoot,
      is_falling_back: reply === null,
      "m.in_reply_to": reply?.["m.in_reply_to"] ?? { event_id: t.threadRoot },
    };
  else if (reply) relates = reply;
  return textContent(part, relates ? { "m.relates_to": relates } : {});
}

/** An edit (spec "Event replacements"): the new text in `m.new_content`, a `* ` fallback body for clients that do not know edits. */
export function editContent(part: Part, eventId: string): Record<string, unknown> {
  const fresh = textContent(part, {}, 2);
  return { msgtype: "m.text", body: `* ${String(fresh.body)}`, "m.new_content": fresh, "m.relates_to": { rel_type: "m.replace", event_id: eventId } };
}

/** A transaction id for a send: the same room, salt and content give the same id, so a retried send is deduplicated by the homeserver. */
export async function txnIdFor(roomId: string, salt: string, content: unknown): Promise<string> {
  return `he${(await sha256Hex(`${roomId}\u0000${salt}\u0000${JSON.stringify(content)}`)).slice(0, 32)}`;
}
