import { describe, expect, it } from "vitest";
import { measure, renderMessage } from "../../workers/format/index.ts";

/** The renderer is pure: the same module runs in workerd (Intl.Segmenter and all). */
describe("format in workerd", () => {
  it("renders and splits a reply for Telegram", () => {
    const md = `## Result\n\n**Done** 👨‍👩‍👧‍👦, see [docs](https://x.io/a_(b)).\n\n\`\`\`ts\n${"const x = 1;\n".repeat(400)}\`\`\``;
    const parts = renderMessage(md, "telegram", { limit: 4096, unit: "utf16" });
    expect(parts.length).toBe(2);
    expect(parts[0]!.text.startsWith("Result\n\nDone 👨‍👩‍👧‍👦, see docs.\n\nconst x = 1;")).toBe(true);
    expect(parts[0]!.entities!.slice(0, 3)).toEqual([
      { type: "bold", offset: 0, length: 6 },
      { type: "bold", offset: 8, length: 4 },
      { type: "text_link", offset: 30, length: 4, url: "https://x.io/a_(b)" },
    ]);
    for (const p of parts) {
      expect(measure(p.text, "utf16")).toBeLessThanOrEqual(4096);
      expect(p.entities!.filter((e) => e.type === "pre").map((e) => e.language)).toEqual(["ts"]);
    }
  });
});
