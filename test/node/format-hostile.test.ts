import { describe, expect, it } from "vitest";
import { measure, renderMessage, renderPlain } from "../../workers/format/index.ts";
import { entityProblems, fencesBalanced } from "../support/format-read.ts";

/**
 * Inputs a model could be steered into producing. Each must render quickly (CommonMark
 * parsers are often quadratic on these; the parser used here is not, and nesting is bounded
 * before parsing), without an exception, within the limit, well formed.
 */
const KB = 1024;
const LIMITS = { telegram: { limit: 4096, unit: "utf16" }, discord: { limit: 2000, unit: "utf16" }, slack: { limit: 39000, unit: "codepoints" } } as const;
type Platform = keyof typeof LIMITS;

/** Each input once, for one platform in turn, half of them as a streaming preview. */
const HOSTILE: [string, () => string, Platform, boolean][] = [
  ["1000 nested quotes", () => `${"> ".repeat(1000)}deep`, "telegram", false],
  ["100,000 nested quotes", () => `${">".repeat(100_000)} deep`, "discord", true],
  ["1000 nested lists by indentation (1 MB)", () => Array.from({ length: 1000 }, (_, i) => `${" ".repeat(2 * i)}- level ${i}`).join("\n"), "slack", false],
  ["1000 nested lists on one line", () => `${"- ".repeat(1000)}deep`, "telegram", true],
  ["quotes and lists mixed", () => `${"> - 1. ".repeat(400)}deep`, "discord", false],
  ["100 KB of brackets", () => "[".repeat(100 * KB), "telegram", false],
  ["200 KB of unclosed link destinations", () => "[a](b ".repeat(33 * KB), "slack", true],
  ["200 KB of nested emphasis", () => `${"*a ".repeat(33 * KB)}b${" c*".repeat(33 * KB)}`, "discord", false],
  ["alternating delimiters", () => "*_".repeat(32 * KB), "telegram", true],
  ["200 KB without a space", () => "x".repeat(200 * KB), "discord", true],
  ["200 KB of emoji clusters", () => "👨‍👩‍👧‍👦".repeat(18 * KB), "telegram", false],
  ["one cluster of 200 KB", () => `a${"\u0301".repeat(200 * KB)}`, "slack", false],
  ["a 200 KB code line", () => `\`\`\`js\n${"y".repeat(200 * KB)}\n\`\`\``, "discord", true],
  ["10,000 table rows", () => `|a|b|\n|-|-|\n${"|x|y|\n".repeat(10_000)}`, "telegram", true],
  ["5000 table columns", () => `|${"a|".repeat(5000)}\n|${"-|".repeat(5000)}\n|${"x|".repeat(5000)}`, "slack", false],
  ["unclosed fences", () => "```\nx\n".repeat(8 * KB), "discord", false],
  ["control characters and lone surrogates", () => "\u0000\u0007\u001b[2J\ud800 \udfff a\u202e b\r\nc\r".repeat(2 * KB), "telegram", true],
];

describe("hostile input", () => {
  it.each(HOSTILE)("%s: renders fast, within limits, without throwing", (_, make, platform, partial) => {
    const md = make();
    const { limit, unit } = LIMITS[platform];
    // A quadratic parser takes tens of seconds on these, past the test's time limit; this
    // one takes a fraction of a second (no clock is asserted: the limit is the guard).
    const parts = renderMessage(md, platform, { limit, unit, partial });
    expect(parts.length).toBeGreaterThan(0);
    for (const p of parts) {
      expect(measure(p.text, unit)).toBeLessThanOrEqual(limit);
      if (platform === "telegram") expect(entityProblems(p)).toEqual([]);
      else expect(fencesBalanced(p.text)).toBe(true);
    }
  });

  it("replaces lone surrogates, which platforms reject", () => {
    expect(renderPlain("a\ud800b \udfffc 😀")).toBe("a\ufffdb \ufffdc 😀");
  });

  it("keeps the text of nesting deeper than any platform shows", () => {
    expect(renderPlain(`${"> ".repeat(1000)}deep`)).toBe("deep");
    expect(
      renderPlain(`${"- ".repeat(30)}deep`)
        .trim()
        .endsWith("deep"),
    ).toBe(true);
    expect(renderPlain(Array.from({ length: 100 }, (_, i) => `${" ".repeat(2 * i)}- level ${i}`).join("\n"))).toContain("level 99");
  });
});
