import { describe, expect, it } from "vitest";
import type { ChatMessage, ChatModel, TurnOutcome } from "../../workers/agent/index.ts";
import { ContextKeeper, type ContextHost } from "../../workers/runtime/context.ts";
import type { TurnRecord } from "../../workers/runtime/queue.ts";
import { exactTokens, randomText, rng } from "../support/context-fixtures.ts";

/** A session's context keeper on a host that only answers what planning needs (no folding happens here). */
function keeper(): ContextKeeper {
  const host: ContextHost = {
    state: () => ({ summary: null, foldedThrough: 0, instructions: null, source: "cli", chatType: null }),
    saveSummary: () => undefined,
    runtime: () => {
      throw new Error("not used by planning");
    },
    model: () => ({ id: "gpt-x" }) as ChatModel,
    settings: () => ({ systemPrompt: undefined, budget: 32_000 }),
    now: () => Date.UTC(2026, 11, 1),
    log: () => undefined,
  };
  return new ContextKeeper(host);
}

const turn = (turnId: string) => ({ turnId, target: null }) as unknown as TurnRecord;
const outcome = (input: number): TurnOutcome => ({ finishReason: "stop", text: "ok", usage: { input, output: 2 }, toolCalls: 0 });

describe("the context keeper's token count, calibrated by the provider's usage", () => {
  it("starts on the safe side, then counts a session's requests within the margin of what its provider reported", () => {
    const rand = rng(11);
    const context = keeper();
    const history: ChatMessage[] = [];
    const ask = (id: string) => {
      history.push({ role: "user", content: randomText(rand, 400) });
      const sent = context.prepare(history, turn(id), []);
      history.push({ role: "assistant", content: randomText(rand, 200) });
      return { sent, exact: exactTokens(sent) };
    };
    const first = ask("t1");
    expect(context.ratio).toBe(1);
    expect(context.lastTokens).toBeGreaterThanOrEqual(first.exact);
    // The provider (cl100k_base here) reports the request's input tokens.
    context.afterTurn(outcome(first.exact));
    expect(context.ratio).toBeLessThan(1);
    const second = ask("t2");
    expect(context.lastTokens).toBeGreaterThanOrEqual(second.exact);
    expect(context.lastTokens).toBeLessThanOrEqual(Math.ceil(second.exact * 1.15) + 16);
    // A turn whose provider reported no usage changes nothing.
    const ratio = context.ratio;
    context.afterTurn(outcome(0));
    expect(context.ratio).toBe(ratio);
  });

  it("sums a turn's model calls (tool rounds) against the turn's reported input", () => {
    const context = keeper();
    const history: ChatMessage[] = [{ role: "user", content: "look it up ".repeat(200) }];
    const a = context.prepare(history, turn("t1"), []);
    history.push({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "fetch_url", arguments: "{}" } }] });
    history.push({ role: "tool", tool_call_id: "c1", content: "result ".repeat(300) });
    const b = context.prepare(history, turn("t1"), []);
    context.afterTurn(outcome(exactTokens(a) + exactTokens(b)));
    const calibrated = context.ratio;
    // Had only the second call counted, the ratio would be about twice as large.
    expect(calibrated).toBeLessThan(1);
    const again = keeper();
    again.prepare(history, turn("t1"), []);
    again.afterTurn(outcome(exactTokens(a) + exactTokens(b)));
    expect(again.ratio).toBeGreaterThan(calibrated * 1.5);
  });
});
