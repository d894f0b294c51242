import { plainPart, renderMessage, type Dialect, type RenderedPart } from "../format/index.ts";
import { sha256Hex } from "../security.ts";
import { splitText } from "./text.ts";
import type { LengthUnit, Shown } from "./types.ts";

/** One message's worth of a rendered reply: its text and, on Telegram, its formatting entities. */
export type Part = RenderedPart;

/** How an adapter renders Markdown: its dialect, and its limit and length unit. */
export interface RenderSpec {
  dialect: Exclude<Dialect, "plain">;
  limit: number;
  unit: LengthUnit;
}

/**
 * Renders a Markdown reply into the parts a platform shows, each within its limit. `live`
 * renders a reply still streaming: what it left open at its end (a fence, `**`, a link) is
 * closed and half-typed markers are hidden, so a preview never shows raw Markdown. A live
 * preview with nothing visible yet (a fence just opened) has no parts; a final rendering
 * with nothing visible (an empty fence) falls back to the text as written, since an empty
 * message is refused by every platform.
 */
export function renderParts(markdown: string, spec: RenderSpec, mode: "live" | "final"): Part[] {
  const parts = renderMessage(markdown, spec.dialect, { limit: spec.limit, unit: spec.unit, partial: mode === "live" });
  if (parts.some((p) => p.text.trim() !== "")) return parts;
  if (mode === "live" || markdown.trim() === "") return [];
  return splitText(markdown.trim(), spec.limit, spec.unit).map((text) => plainPart(text, spec.dialect));
}

/** Send and edit of one part, as an adapter does them. */
export interface PartIo {
  send(part: Part, index: number): Promise<string>;
  edit(id: string, part: Part, index: number): Promise<void>;
  /**
   * Names the chat the messages are in (the adapter's platform and target), so that what each
   * message shows is remembered and an edit to what it already shows is skipped. Unset: every
   * part is sent or edited.
   */
  scope?: string;
}

/**
 * Renders `markdown` for a platform and shows it (see {@link showParts}). A live preview counts
 * as `complete` only when it is also exactly the final rendering: a reply that really ends in
 * an unclosed `**` previews without it, and its final rendering shows it, so that reply still
 * needs its final delivery.
 */
export async function showMarkdown(io: PartIo, markdown: string, spec: RenderSpec, ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
  const parts = renderParts(markdown, spec, mode);
  const shown = await showParts(io, parts, ids, mode);
  if (mode === "final" || !shown.complete) return shown;
  return { ...shown, complete: sameParts(parts, renderParts(markdown, spec, "final")) };
}

/**
 * Shows rendered parts: `live` shows the first, `final` all of them; messages in `ids` are
 * edited in place, further parts posted. An edit to exactly what the message already shows
 * (as far as this isolate knows: see {@link PartIo.scope}) is skipped, so a final part that
 * the last live update already showed is not edited again. Returns the ids now showing the
 * reply. With no parts (a preview with nothing visible yet), nothing is shown.
 */
export async function showParts(io: PartIo, parts: readonly Part[], ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
  const shown = mode === "live" ? parts.slice(0, 1) : parts;
  const out: string[] = [];
  for (const [i, part] of shown.entries()) {
    const id = ids[i];
    const seal = io.scope === undefined ? null : await fingerprint(part);
    if (id !== undefined) {
      const key = `${io.scope}\u0000${id}`;
      if (seal === null || showing.get(key) !== seal) {
        // Until the edit is confirmed, what the message shows is unknown.
        showing.delete(key);
        await io.edit(id, part, i);
        if (seal !== null) remember(key, seal);
      }
      out.push(id);
    } else {
      const sent = await io.send(part, i);
      if (seal !== null) remember(`${io.scope}\u0000${sent}`, seal);
      out.push(sent);
    }
  }
  // Messages beyond the parts (a re-run with a shorter reply) stay as they are, and listed.
  return { ids: [...out, ...ids.slice(out.length)], complete: shown.length === parts.length };
}

/** Whether two renderings are the same messages (text and formatting). */
export function sameParts(a: readonly Part[], b: readonly Part[]): boolean {
  return a.length === b.length && a.every((p, i) => JSON.stringify(p) === JSON.stringify(b[i]));
}

/**
 * What each message this isolate sent or edited last shows (a digest of its part), by scope
 * and message id. Bounded: the oldest entries go first; a forgotten message is simply edited.
 * Only an optimisation: a restarted object knows nothing and edits everything once more.
 */
const showing = new Map<string, string>();
const SHOWING_MAX = 1024;

function remember(key: string, seal: string): void {
  showing.delete(key);
  showing.set(key, seal);
  const oldest = showing.keys().next();
  if (showing.size > SHOWING_MAX && !oldest.done) showing.delete(oldest.value);
}

function fingerprint(part: Part): Promise<string> {
  return sha256Hex(JSON.stringify(part));
}
