import { encode, encodeChat } from "gpt-tokenizer/encoding/cl100k_base";
import { encodeChat as encodeChatO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { estimateRequestTokens, loadTokenCounter, truncateToTokens, fetchUrlTool, ToolRegistry } from "../../workers/agent/index.ts";
import { exactTokens, randomMessages, randomText, rng } from "../support/context-fixtures.ts";

const counter = await loadTokenCounter();
const tools = new ToolRegistry([fetchUrlTool()]).schemas();

describe("token estimates", () => {
  it("are never below the tokenizer's exact count and at most 10% + a few tokens above it (200 random requests)", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const messages = randomMessages(rng(seed));
      const withTools = seed % 2 === 0 ? tools : undefined;
      const exact = exactTokens(messages, withTools);
      const estimate = estimateRequestTokens(counter, messages, withTools);
      expect(estimate, `seed ${seed}`).toBeGreaterThanOrEqual(exact);
      expect(estimate, `seed ${seed}`).toBeLessThanOrEqual(Math.ceil(exact * 1.1) + 16 + 12 * messages.length);
    }
  });

  it("are checked against counts that equal the tokenizer's count of the whole chat", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const messages = randomMessages(rng(seed));
      const chat = messages.map((m) => ({
        role: m.role,
        content: [m.content ?? "", m.name ?? "", m.tool_call_id ?? "", ...(m.tool_calls ?? []).flatMap((c) => [c.id, c.function.name, c.function.arguments])]
          .filter(Boolean)
          .join("\n"),
      }));
      expect(exactTokens(messages), `seed ${seed}`).toBe(encodeChat(chat, "gpt-4", { disallowedSpecial: new Set() }).length);
    }
  });

  it("also cover o200k_base (gpt-4o and later) for the same content", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const messages = randomMessages(rng(seed));
      const chat = messages.map((m) => ({ role: m.role, content: [m.content ?? "", ...(m.tool_calls ?? []).map((c) => c.function.arguments)].join("\n") }));
      const o200k = encodeChatO200k(chat, "gpt-4o", { disallowedSpecial: new Set() }).length;
      expect(estimateRequestTokens(counter, messages), `seed ${seed}`).toBeGreaterThanOrEqual(o200k);
    }
  });

  it("count a pasted 200,000-character word quickly (byte-pair merging is quadratic in one piece)", () => {
    const han = "東京".repeat(100_000);
    expect(counter.count(han)).toBeGreaterThanOrEqual(encode(han.slice(0, 2000), { disallowedSpecial: new Set() }).length * 100);
  });

  it("count text that looks like special tokens as plain text instead of throwing", () => {
    expect(counter.count("<|endoftext|><|im_start|>")).toBeGreaterThan(2);
  });
});

describe("truncateToTokens", () => {
  it("cuts to at most the limit with the marker, keeps text that fits, and never splits a surrogate pair", () => {
    const rand = rng(7);
    for (let i = 0; i < 50; i++) {
      const text = randomText(rand, 50 + Math.floor(rand() * 3000));
      const max = 1 + Math.floor(rand() * 300);
      const cut = truncateToTokens(counter, text, max, " [cut]");
      expect(counter.count(cut)).toBeLessThanOrEqual(max);
      if (counter.count(text) <= max) expect(cut).toBe(text);
      else if (cut !== "") {
        expect(cut.endsWith(" [cut]")).toBe(true);
        expect(text.startsWith(cut.slice(0, -" [cut]".length))).toBe(true);
      }
      expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    }
  });
});
