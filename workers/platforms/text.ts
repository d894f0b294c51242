import type { LengthUnit } from "./types.ts";

/** Length of `text` as a platform counts it. */
export function measure(text: string, unit: LengthUnit): number {
  return unit === "utf16" ? text.length : [...text].length;
}

/**
 * Splits `text` into pieces of at most `limit` units, preferring paragraph, then line, then
 * word boundaries, never cutting a surrogate pair.
 */
export function splitText(text: string, limit: number, unit: LengthUnit): string[] {
  if (limit <= 0) throw new Error("limit must be positive");
  const out: string[] = [];
  let rest = text;
  while (measure(rest, unit) > limit) {
    const head = take(rest, limit, unit);
    const cut = bestCut(head);
    const piece = head.slice(0, cut).trimEnd();
    out.push(piece === "" ? head : piece);
    rest = rest.slice(piece === "" ? head.length : cut).replace(/^\s+/, "");
  }
  if (rest !== "" || out.length === 0) out.push(rest);
  return out;
}

/** The longest prefix of `text` within `limit` units. */
function take(text: string, limit: number, unit: LengthUnit): string {
  if (unit === "codepoints") return [...text].slice(0, limit).join("");
  let end = Math.min(limit, text.length);
  const code = text.charCodeAt(end - 1);
  if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--; // keep the pair whole
  return text.slice(0, end);
}

function bestCut(head: string): number {
  const min = Math.floor(head.length / 2);
  for (const sep of ["\n\n", "\n", " "]) {
    const at = head.lastIndexOf(sep);
    if (at >= min) return at + sep.length;
  }
  return head.length;
}
