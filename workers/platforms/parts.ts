import type { LengthUnit, Shown } from "./types.ts";
import { splitText } from "./text.ts";

/** One message's worth of a rendered reply: its text and, on Telegram, its formatting entities. */
export interface Part {
  text: string;
  entities?: Array<{ type: string; offset: number; length: number; url?: string; language?: string }>;
}

/** How an adapter renders Markdown: its dialect's limit and length unit. */
export interface RenderSpec {
  limit: number;
  unit: LengthUnit;
}

/**
 * Renders a Markdown reply into the parts a platform shows, each within its limit. `live`
 * renders a reply still streaming (only its first part is shown).
 */
export function renderParts(markdown: string, spec: RenderSpec, _mode: "live" | "final"): Part[] {
  return splitText(markdown, spec.limit, spec.unit).map((text) => ({ text }));
}

/** Send and edit of one part, as an adapter does them. */
export interface PartIo {
  send(part: Part, index: number): Promise<string>;
  edit(id: string, part: Part, index: number): Promise<void>;
}

/**
 * Shows rendered parts: `live` shows the first, `final` all of them; messages in `ids` are
 * edited in place, further parts posted. Returns the ids now showing the reply.
 */
export async function showParts(io: PartIo, parts: readonly Part[], ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
  const shown = mode === "live" ? parts.slice(0, 1) : parts;
  const out: string[] = [];
  for (const [i, part] of shown.entries()) {
    const id = ids[i];
    if (id !== undefined) {
      await io.edit(id, part, i);
      out.push(id);
    } else {
      out.push(await io.send(part, i));
    }
  }
  // Messages beyond the parts (a re-run with a shorter reply) stay as they are, and listed.
  return { ids: [...out, ...ids.slice(out.length)], complete: shown.length === parts.length };
}
