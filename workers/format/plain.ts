import type { Line, Span } from "./ir.ts";
import type { Writer } from "./writer.ts";

/** The visible text of spans, each link followed by ` (url)` once. */
export function plainSpans(spans: readonly Span[]): string {
  let out = "";
  spans.forEach((s, i) => {
    out += s.text;
    if (s.link && spans[i + 1]?.link !== s.link) out += ` (${s.link})`;
  });
  return out;
}

/** Plain text: formatting removed, links as `label (url)`, code as its lines. */
export const plainWriter: Writer = {
  entities: false,
  codeFrame: () => ({ open: "", close: "" }),
  codeLine: (text) => text,
  line: (line: Line) => ({ text: line.prefix + plainSpans(line.spans), entities: [] }),
};
