import { toolError } from "../tools.ts";

/** Longest tool result given to the model, in characters (the rest is cut with a note). */
export const DEFAULT_MAX_RESULT_CHARS = 20_000;

/** Replaces every occurrence of the given secrets (tokens, URL secrets) with `[redacted]`. */
export type Redactor = (text: string) => string;

/** A redactor for `secrets`; empty and very short values (under 4 characters) are ignored. */
export function redactor(secrets: readonly (string | undefined)[]): Redactor {
  // Longest first, so a secret that contains another is replaced whole.
  const list = [...new Set(secrets.filter((s): s is string => typeof s === "string" && s.length >= 4))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => list.reduce((t, s) => t.split(s).join("[redacted]"), text);
}

/** The parts of a `tools/call` result this module reads; anything else is ignored. */
interface CallResultShape {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

function byteSize(base64: unknown): string {
  if (typeof base64 !== "string") return "";
  const bytes = Math.floor((base64.replace(/=+$/, "").length * 3) / 4);
  return `, ${bytes} bytes`;
}

/** One content block as text: text as it is, anything else described in brackets. */
function blockText(block: unknown): string {
  if (typeof block !== "object" || block === null) return "";
  const b = block as Record<string, unknown>;
  const mime = typeof b.mimeType === "string" ? b.mimeType : "unknown type";
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? b.text : "";
    case "image":
    case "audio":
      return `[${b.type}: ${mime}${byteSize(b.data)}]`;
    case "resource_link":
      return `[resource link: ${String(b.uri ?? "")}${typeof b.name === "string" ? ` (${b.name})` : ""}]`;
    case "resource": {
      const r = (typeof b.resource === "object" && b.resource !== null ? b.resource : {}) as Record<string, unknown>;
      const uri = String(r.uri ?? "");
      if (typeof r.text === "string") return `[resource ${uri}]\n${r.text}`;
      return `[resource ${uri}: ${typeof r.mimeType === "string" ? r.mimeType : "binary"}${byteSize(r.blob)}]`;
    }
    default:
      return `[${String(b.type ?? "unknown")} content]`;
  }
}

/** Cuts `text` to `max` characters with a note saying how much was left out. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[… result truncated: ${text.length - max} more characters]`;
}

/**
 * A `tools/call` result as the string given to the model: the text blocks joined by
 * newlines, other blocks described (`[image: image/png, 1234 bytes]`), structured content
 * as JSON when there are no blocks; capped at `maxChars`, secrets redacted. A result the
 * server marked `isError` comes back as `{"error": …}`, like other tools' failures.
 */
export function formatCallResult(result: unknown, opts: { maxChars: number; redact: Redactor }): string {
  const r = (typeof result === "object" && result !== null ? result : {}) as CallResultShape;
  const blocks = Array.isArray(r.content) ? r.content : [];
  let text = blocks
    .map(blockText)
    .filter((t) => t !== "")
    .join("\n");
  if (text === "" && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent) ?? "";
  // Redacted before the cut, so a secret split by the cut cannot show half.
  text = capText(opts.redact(text), opts.maxChars);
  if (r.isError === true) return toolError(text || "the tool reported an error");
  return text === "" ? "(the tool returned no content)" : text;
}
