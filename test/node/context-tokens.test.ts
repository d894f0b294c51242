import { encode, encodeChat } from "gpt-tokenizer/encoding/cl100k_base";
import { encode as encodeO200k, encodeChat as encodeChatO200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  calibratedRatio,
  estimateRequestTokens,
  estimatingCounter,
  requestTokens,
  truncateToTokens,
  fetchUrlTool,
  ToolRegistry,
} from "../../workers/agent/index.ts";
import { exactTokens, randomMessages, randomText, rng } from "../support/context-fixtures.ts";

const counter = estimatingCounter();
const tools = new ToolRegistry([fetchUrlTool()]).schemas();
const asText = { disallowedSpecial: new Set<string>() };

// Kinds of text a session holds, each long enough to average over (the tokenizers are the
// references: gpt-tokenizer is a dev dependency, never part of the Worker).
const KINDS: Record<string, string> = {
  english: "The Worker answers the webhook first, then the session object runs the turn and streams the reply by edits. ".repeat(30),
  code: 'export function handler(req: Request): Promise<Response> {\n  const url = new URL(req.url);\n  return fetch(url, { method: "POST" });\n}\n'.repeat(30),
  json: JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ id: i, name: `item-${i}`, ok: i % 2 === 0, at: "2026-12-01T07:35:48Z" }))),
  german: "Sehr geehrte Damen und Herren, die Lieferung für nächste Woche ist geplant. Grüße aus München. ".repeat(30),
  japanese: "東京都の天気は晴れです。今日は会議があります。明日の予定を確認してください。".repeat(30),
  russian: "Привет, как дела? Сегодня мы обсудили план работы на следующую неделю. ".repeat(30),
  emoji: "🙂 🚀🚀 great job 🎉 ✅ done 👍🏽 ".repeat(40),
  base64: btoa(String.fromCharCode(...Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256))),
  hex: Array.from({ length: 500 }, (_, i) => ((i * 2654435761) >>> 0).toString(16)).join(""),
};

describe("token estimates", () => {
  it("are never below the tokenizer's exact count, with the margin, and at most about twice it (200 random requests)", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const messages = randomMessages(rng(seed));
      const withTools = seed % 2 === 0 ? tools : undefined;
      const exact = exactTokens(messages, withTools);
      const estimate = estimateRequestTokens(counter, messages, withTools);
      expect(estimate, `seed ${seed}`).toBeGreaterThanOrEqual(exact);
      expect(estimate, `seed ${seed}`).toBeLessThanOrEqual(Math.ceil(exact * 2) + 16 + 12 * messages.length);
    }
  });

  it("count every kind of text at or above both OpenAI encodings, English within 1.6x of them, any kind within 2.2x of cl100k_base", () => {
    for (const [kind, text] of Object.entries(KINDS)) {
      const cl100k = encode(text, asText).length;
      const o200k = encodeO200k(text, asText).length;
      const n = counter.count(text);
      expect(n, kind).toBeGreaterThanOrEqual(Math.max(cl100k, o200k));
      expect(n, kind).toBeLessThanOrEqual(2.2 * cl100k);
      if (kind === "english") expect(n, kind).toBeLessThanOrEqual(1.6 * Math.min(cl100k, o200k));
    }
  });

  it("once calibrated by a provider's reported usage, count a session of like text within the margin of the provider's count", () => {
    for (const [kind, text] of Object.entries(KINDS)) {
      // The provider (here: cl100k_base) reports the first turn's input tokens; the next
      // turn's request, of the same kind of text, is then estimated close to its count.
      const turn = (i: number) => [{ role: "user" as const, content: `${i}: ${text.slice(i * 40, i * 40 + 3000)}` }];
      const kept: number[] = [];
      const ratio = calibratedRatio(kept, exactTokens(turn(0)), requestTokens(counter, turn(0)));
      const calibrated = estimatingCounter(ratio);
      const next = turn(1);
      const exact = exactTokens(next);
      expect(ratio, kind).toBeLessThanOrEqual(1);
      expect(estimateRequestTokens(calibrated, next), kind).toBeGreaterThanOrEqual(exact);
      expect(estimateRequestTokens(calibrated, next), kind).toBeLessThanOrEqual(Math.ceil(exact * 1.15) + 16);
    }
  });

  it("calibrate to the largest ratio of the last few turns, within bounds, and ignore turns without usage", () => {
    const kept: number[] = [];
    expect(calibratedRatio(kept, 0, 100)).toBe(1);
    expect(calibratedRatio(kept, 50, 100)).toBe(0.5);
    expect(calibratedRatio(kept, 70, 100)).toBe(0.7);
    expect(calibratedRatio(kept, 60, 100)).toBe(0.7);
    expect(calibratedRatio(kept, 1, 100)).toBe(0.7); // 0.25 at least, and the largest of the last four wins
    expect(calibratedRatio(kept, 55, 100)).toBe(0.7);
    expect(calibratedRatio(kept, 55, 100)).toBe(0.6); // 0.7 is no longer among the last four
    expect(calibratedRatio([], 10_000, 100)).toBe(4);
    expect(estimatingCounter(0.5).count(KINDS.english!)).toBe(Math.ceil(counter.count(KINDS.english!) * 0.5));
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

  it("count a pasted 200,000-character word at or above the tokenizer's count of it", () => {
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
