import type { Counts, Tally } from "./harness.ts";

const COLUMNS: Array<[keyof Counts, string]> = [
  ["lost", "lost"],
  ["doubled", "doubled"],
  ["truncated", "truncated"],
  ["fiveXx", "5xx"],
  ["breached", "breached"],
];

/** The table of counts per scenario, a total row, and what each non-zero count was. */
export function report(tallies: readonly Tally[], elapsedMs: number): string {
  const width = Math.max(34, ...tallies.map((t) => t.name.length + 2));
  const head = `${"scenario".padEnd(width)}${"cases".padStart(7)}${COLUMNS.map(([, h]) => h.padStart(11)).join("")}`;
  const row = (name: string, cases: number, c: Counts) =>
    `${name.padEnd(width)}${String(cases).padStart(7)}${COLUMNS.map(([k]) => String(c[k]).padStart(11)).join("")}`;
  const total: Counts = { lost: 0, doubled: 0, truncated: 0, fiveXx: 0, breached: 0 };
  for (const t of tallies) for (const [k] of COLUMNS) total[k] += t.counts[k];
  const lines = [
    head,
    "-".repeat(head.length),
    ...tallies.map((t) => row(t.name, t.cases, t.counts)),
    "-".repeat(head.length),
    row(
      "total",
      tallies.reduce((n, t) => n + t.cases, 0),
      total,
    ),
  ];
  const info = tallies.flatMap((t) => t.info.map((n) => `  ${t.name}: ${n}`));
  if (info.length) lines.push("", ...info);
  const notes = tallies.flatMap((t) => t.notes.map((n) => `  ${t.name}: ${n}`));
  if (notes.length) lines.push("", "what was counted:", ...notes);
  const clean = Object.values(total).every((n) => n === 0) && tallies.length > 0;
  lines.push("", `${clean ? "all zero" : "NOT all zero"} (${(elapsedMs / 1000).toFixed(0)} s)`);
  return lines.join("\n");
}
