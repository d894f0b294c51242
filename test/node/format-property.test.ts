import { describe, expect, it } from "vitest";
import { measure, renderMessage, renderPlain, type Dialect, type LengthUnit } from "../../workers/format/index.ts";
import { randomMarkdown, rng } from "../support/format-gen.ts";
import { entityProblems, fencesBalanced, joinsTo, visibleText } from "../support/format-read.ts";

const DIALECTS: Dialect[] = ["telegram", "slack", "discord", "plain"];
// 30 seeds split in four dialects are 120 split replies, about 0.4 s here idle (60 took 0.9 s
// idle and 2.6 s at a load of 4: a test that busy fails its 5 s budget on a loaded machine).
const CASES = 30;

/**
 * For random replies and small random limits (so almost every reply is split, often inside
 * code, lists and links): every part is within its limit and well formed, and the parts'
 * visible text, laid end to end, is renderPlain of the whole. The only thing a cut may drop
 * is the whitespace at it (a blank line, a line break, or the spaces between two words).
 */
describe("splitting keeps every character exactly once", () => {
  it(`holds for ${CASES} seeded random replies in every dialect`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const r = rng(seed);
      const md = randomMarkdown(r);
      const plain = renderPlain(md);
      const unit: LengthUnit = r() < 0.5 ? "utf16" : "codepoints";
      const limit = 16 + Math.floor(r() * 300);
      for (const dialect of DIALECTS) {
        const parts = renderMessage(md, dialect, { limit, unit });
        const where = `seed ${seed}, ${dialect}, limit ${limit} ${unit}`;
        for (const p of parts) {
          expect(measure(p.text, unit), where).toBeLessThanOrEqual(limit);
          if (parts.length > 1) expect(p.text.trim(), where).not.toBe("");
          if (dialect === "telegram") expect(entityProblems(p), where).toEqual([]);
          if (dialect === "slack" || dialect === "discord") expect(fencesBalanced(p.text), where).toBe(true);
        }
        const seen = parts.map((p) => visibleText(p, dialect));
        expect(joinsTo(seen, plain), `${where}\n${JSON.stringify(seen)}\n${JSON.stringify(plain)}`).toBe(true);
      }
    }
  });

  it("keeps the whole reply in one part when it fits, identical to the plain rendering", () => {
    for (let seed = 1000; seed < 1025; seed++) {
      const md = randomMarkdown(rng(seed));
      const plain = renderPlain(md);
      for (const dialect of DIALECTS) {
        const parts = renderMessage(md, dialect, { limit: 100_000, unit: "utf16" });
        expect(parts).toHaveLength(1);
        expect(visibleText(parts[0]!, dialect)).toBe(plain);
      }
    }
  });
});
