import { describe, expect, it } from "vitest";
import { MIN_LIMIT, measure, renderMessage, renderPlain, type Dialect, type LengthUnit } from "../../workers/format/index.ts";
import { entityProblems, fencesBalanced, joinsTo, visibleText } from "../support/format-read.ts";

/** The limits the platforms enforce. */
const PLATFORMS: [Dialect, number, LengthUnit][] = [
  ["telegram", 4096, "utf16"],
  ["discord", 2000, "utf16"],
  ["slack", 39000, "codepoints"],
  ["whatsapp", 4096, "utf16"],
];

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const clusters = (s: string) => Array.from(segmenter.segment(s), (x) => x.segment);

function render(md: string, dialect: Dialect, limit: number, unit: LengthUnit) {
  const parts = renderMessage(md, dialect, { limit, unit });
  for (const p of parts) {
    expect(measure(p.text, unit)).toBeLessThanOrEqual(limit);
    if (dialect === "telegram") expect(entityProblems(p)).toEqual([]);
    else expect(fencesBalanced(p.text)).toBe(true);
  }
  expect(
    joinsTo(
      parts.map((p) => visibleText(p, dialect)),
      renderPlain(md),
    ),
  ).toBe(true);
  return parts;
}

const codeLines = Array.from({ length: 400 }, (_, i) => `    result_${i} = compute(${i}, "value") + offset  # step ${i}`);
const LONG_CODE = `Here is the script:\n\n\`\`\`python\ndef main():\n${codeLines.join("\n")}\n\`\`\`\n\nRun it with \`python main.py\`.`;

describe("text right at each platform's limit", () => {
  it.each(PLATFORMS)("%s: exactly the limit is one part, one unit more is two, cut between words", (dialect, limit, unit) => {
    // Words with a non-BMP letter (two UTF-16 units, one code point), the last padded to the limit.
    const word = "ab𝐁 ";
    const base = word.repeat(Math.floor((limit - 1) / measure(word, unit)));
    const last = "x".repeat(limit - measure(base, unit));
    const exact = base + last;
    expect(measure(exact, unit)).toBe(limit);
    expect(render(exact, dialect, limit, unit)).toEqual([dialect === "telegram" ? { text: exact, entities: [] } : { text: exact }]);
    const over = render(`${exact}y`, dialect, limit, unit);
    expect(over.map((p) => p.text)).toEqual([base.trimEnd(), `${last}y`]);
  });
});

describe("a code block longer than the limit", () => {
  it.each(PLATFORMS.slice(0, 2))("%s: is cut between lines, each part a complete code block with the language", (dialect, limit, unit) => {
    const parts = render(LONG_CODE, dialect, limit, unit);
    expect(parts.length).toBeGreaterThanOrEqual(dialect === "discord" ? 11 : 5);
    const code = parts.map((p) => {
      if (dialect === "telegram") {
        const pre = p.entities!.filter((e) => e.type === "pre");
        expect(pre).toHaveLength(1);
        expect(pre[0]!.language).toBe("python");
        return p.text.slice(pre[0]!.offset, pre[0]!.offset + pre[0]!.length);
      }
      const m = /```python\n([\s\S]*?)\n```/.exec(p.text);
      expect(m, p.text.slice(0, 80)).not.toBeNull();
      return m![1]!;
    });
    // Every line of code exactly once, in order, never cut inside.
    expect(code.join("\n")).toBe(`def main():\n${codeLines.join("\n")}`);
    expect(parts[0]!.text.startsWith("Here is the script:")).toBe(true);
  });

  it("slack: reopens the fence (no language) in every part; a code line longer than a part is cut and nothing is dropped", () => {
    const line = "x".repeat(50) + " = " + "'é'".repeat(40);
    const parts = render(`\`\`\`\n${line}\n\`\`\``, "slack", 60, "codepoints");
    for (const p of parts) expect(p.text).toMatch(/^```\n[^\n]+\n```$/);
    expect(parts.map((p) => p.text.slice(4, -4)).join("")).toBe(line);
  });

  it("counts the reopened fences and language against the limit", () => {
    const parts = render(LONG_CODE, "discord", 300, "utf16");
    expect(parts.some((p) => measure(p.text, "utf16") > 290)).toBe(true);
    for (const p of parts.slice(1, -1)) expect(p.text.startsWith("```python\n") && p.text.endsWith("\n```")).toBe(true);
  });
});

describe("structure across parts", () => {
  it("prefers block, then line, then word boundaries", () => {
    const para = (n: number) => `Paragraph ${n} ${"word ".repeat(30).trim()}.`;
    const md = [1, 2, 3, 4].map(para).join("\n\n");
    const parts = render(md, "plain", 2 * para(1).length + 10, "utf16");
    expect(parts.map((p) => p.text)).toEqual([`${para(1)}\n\n${para(2)}`, `${para(3)}\n\n${para(4)}`]);
    const list = render("- first item\n- second item\n- third item", "plain", 30, "utf16");
    expect(list.map((p) => p.text)).toEqual(["• first item\n• second item", "• third item"]);
  });

  it("gives each part its own entities: a bold run across a cut is bold in both parts", () => {
    const bold = `**${"strong words ".repeat(60).trim()}**`;
    const parts = render(bold, "telegram", 300, "utf16");
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(p.entities).toEqual([{ type: "bold", offset: 0, length: p.text.length }]);
    const slack = render(bold, "slack", 300, "codepoints");
    for (const p of slack) expect(p.text).toMatch(/^\*[^*]+\*$/);
  });

  it("moves a link whole to the next part rather than cutting it", () => {
    const md = `${"lead ".repeat(10)}[a link label of some length](https://example.com/page_(x)) tail`;
    const parts = render(md, "telegram", 70, "utf16");
    const link = parts.flatMap((p) => p.entities!.filter((e) => e.type === "text_link").map((e) => p.text.slice(e.offset, e.offset + e.length)));
    expect(link).toEqual(["a link label of some length"]);
  });

  it("writes a link longer than a whole part as label (url), split like text", () => {
    const url = `https://example.com/${"segment/".repeat(40)}`;
    const parts = render(`[docs](${url})`, "discord", 100, "utf16");
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((p) => p.text).join("")).not.toContain("](");
  });

  it("never cuts a surrogate pair or a grapheme cluster", () => {
    const family = "👨‍👩‍👧‍👦";
    const md = `${family.repeat(500)} ${"e\u0301".repeat(3000)} ${"🇯🇵".repeat(900)}`;
    for (const [dialect, limit, unit] of PLATFORMS) {
      const parts = render(md, dialect, Math.min(limit, 997), unit);
      const seen = parts.flatMap((p) => clusters(p.text)).filter((c) => c.trim() !== "");
      expect(seen).toEqual(clusters(md).filter((c) => c.trim() !== ""));
    }
  });

  it("cuts inside a cluster only when one cluster is longer than a part", () => {
    const zalgo = `a${"\u0301".repeat(100)}`;
    const parts = render(zalgo, "telegram", MIN_LIMIT, "utf16");
    expect(parts.map((p) => p.text).join("")).toBe(zalgo);
  });

  it("stays within the smallest limit with every marker a line can carry", () => {
    const md = "> ### **~~*`x`*~~** [y](https://y.io) ```z```\n\n```averyveryverylonglanguagename\ncode\n```";
    for (const dialect of ["telegram", "slack", "discord"] as const) render(md, dialect, MIN_LIMIT, "utf16");
  });
});

describe("options", () => {
  it("rejects a limit below MIN_LIMIT or not an integer, and an unknown unit", () => {
    expect(() => renderMessage("x", "telegram", { limit: MIN_LIMIT - 1, unit: "utf16" })).toThrow(RangeError);
    expect(() => renderMessage("x", "telegram", { limit: 100.5, unit: "utf16" })).toThrow(RangeError);
    expect(() => renderMessage("x", "telegram", { limit: 100, unit: "bytes" as "utf16" })).toThrow(RangeError);
  });

  it("measures in UTF-16 units or code points", () => {
    expect(measure("a😀", "utf16")).toBe(3);
    expect(measure("a😀", "codepoints")).toBe(2);
    expect(measure("\ud800x", "codepoints")).toBe(2);
  });
});
