import { rng } from "./random.ts";

/** The generator the property tests seed (re-exported for them). */
export { rng };

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/**
 * Words users see: ASCII, HTML-special characters, emoji (with ZWJ sequences and skin tones),
 * non-BMP letters, CJK, combining marks, mention-like text. None is a formatting character.
 */
const WORDS = [
  "the",
  "reply",
  "works",
  "deploy",
  "Worker",
  "a&b",
  "x<y",
  "y>z",
  "2+2",
  "100%",
  "café",
  "e\u0301t\u0301e\u0301",
  "😀",
  "👍🏽",
  "👨‍👩‍👧‍👦",
  "🇯🇵",
  "𝐁𝐨𝐥𝐝",
  "漢字かな",
  "한국어",
  "@everyone",
  "@here",
  "<@123>",
  "(note)",
  "end.",
  "well,",
  "done!",
  "supercalifragilisticexpialidocious",
  "ok",
  "ZWJ",
  "🎉🎉🎉",
];
const CODE_CHARS = [
  "let x = 1;",
  "  return a < b && c > d;",
  "if (ok) { go(); }",
  "# comment",
  "    deep indent",
  "😀 = 'emoji'",
  "*ptr = _val ~ x",
  "",
  "x".repeat(70),
];
const URLS = ["https://example.com", "https://en.wikipedia.org/wiki/Foo_(bar)".replace("_", "-"), "https://a.io/p?q=1&r=2", "http://x.y/z#frag"];

function words(r: Rand, n: number): string {
  return Array.from({ length: n }, () => pick(r, WORDS)).join(" ");
}

function inline(r: Rand): string {
  const parts: string[] = [];
  const n = int(r, 1, 6);
  for (let i = 0; i < n; i++) {
    const w = words(r, int(r, 1, 5));
    const k = r();
    if (k < 0.12) parts.push(`**${w}**`);
    else if (k < 0.22) parts.push(`*${w}*`);
    else if (k < 0.28) parts.push(`~~${w}~~`);
    else if (k < 0.36) parts.push(`\`${pick(r, ["npm ci", "a < b", "x&y", "f()", "😀 x"])}\``);
    else if (k < 0.44) parts.push(`[${w}](${pick(r, URLS)})`);
    else if (k < 0.48) parts.push(pick(r, URLS));
    else if (k < 0.5) parts.push(`![${w}](${pick(r, URLS)}/i.png)`);
    else if (k < 0.54) parts.push(`**${w} *${words(r, 2)}* ${words(r, 1)}**`);
    else parts.push(w);
  }
  return parts.join(" ");
}

function paragraph(r: Rand): string {
  return Array.from({ length: int(r, 1, 3) }, () => `Line ${inline(r)}`).join("\n");
}

function list(r: Rand, depth: number): string {
  const ordered = r() < 0.4;
  const indent = "   ".repeat(depth);
  return Array.from({ length: int(r, 1, 4) }, (_, i) => {
    const marker = ordered ? `${i + 1}.` : "-";
    const task = !ordered && r() < 0.15 ? (r() < 0.5 ? "[ ] " : "[x] ") : "";
    let item = `${indent}${marker} ${task}${inline(r)}`;
    if (depth < 3 && r() < 0.3) item += `\n${list(r, depth + 1)}`;
    return item;
  }).join("\n");
}

function code(r: Rand): string {
  const lang = pick(r, ["", "ts", "python", "c++"]);
  const lines = Array.from({ length: int(r, 1, 8) }, () => pick(r, CODE_CHARS));
  if (lines.every((l) => l.trim() === "")) lines.push("x");
  return `\`\`\`${lang}\n${lines.join("\n")}\n\`\`\``;
}

function table(r: Rand): string {
  const cols = int(r, 2, 4);
  const row = () => `| ${Array.from({ length: cols }, () => words(r, int(r, 1, 2))).join(" | ")} |`;
  const delim = `|${Array.from({ length: cols }, () => pick(r, ["---", ":--", "--:", ":-:"])).join("|")}|`;
  return [row(), delim, ...Array.from({ length: int(r, 1, 4) }, row)].join("\n");
}

/** A random Markdown reply of a few blocks. */
export function randomMarkdown(r: Rand): string {
  const blocks = Array.from({ length: int(r, 1, 6) }, () => {
    const k = r();
    if (k < 0.3) return paragraph(r);
    if (k < 0.4) return `${"#".repeat(int(r, 1, 6))} ${inline(r)}`;
    if (k < 0.58) return list(r, 0);
    if (k < 0.68)
      return (
        paragraph(r)
          .split("\n")
          .map((l) => `> ${l}`)
          .join("\n") + (r() < 0.5 ? `\n>\n> ${inline(r)}` : "")
      );
    if (k < 0.82) return code(r);
    if (k < 0.92) return table(r);
    if (k < 0.96) return "---";
    return `Long ${words(r, 60)}`;
  });
  return blocks.join("\n\n");
}
