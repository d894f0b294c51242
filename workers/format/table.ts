import { itemAt } from "./item-at.ts";
import { displayWidth } from "./measure.ts";

/** Column alignment from a GFM delimiter row ("" when none was given). */
export type Align = "left" | "right" | "center" | "";

/**
 * Lays a table out as monospaced lines: cells padded to their column's width (East Asian wide
 * characters and emoji count two columns), ` | ` between columns, a dashed rule under the
 * header. Rows shorter than the header are padded with empty cells.
 */
export function tableLines(rows: readonly string[][], aligns: readonly Align[]): string[] {
  const cols = rows.reduce((n, r) => Math.max(n, r.length), Math.max(aligns.length, 1));
  const cells = rows.map((r) => Array.from({ length: cols }, (_, c) => (r[c] ?? "").replace(/\s+/g, " ").trim()));
  const widths = new Array<number>(cols).fill(1);
  for (const r of cells) r.forEach((cell, c) => (widths[c] = Math.max(itemAt(widths, c), displayWidth(cell))));
  const row = (r: string[]) =>
    r
      .map((cell, c) => pad(cell, itemAt(widths, c), aligns[c] ?? ""))
      .join(" | ")
      .trimEnd();
  const out = cells.map(row);
  out.splice(1, 0, widths.map((w) => "-".repeat(w)).join("-+-"));
  return out;
}

function pad(cell: string, width: number, align: Align): string {
  const gap = width - displayWidth(cell);
  if (align === "right") return " ".repeat(gap) + cell;
  if (align === "center") return " ".repeat(Math.floor(gap / 2)) + cell + " ".repeat(gap - Math.floor(gap / 2));
  return cell + " ".repeat(gap);
}
