import { describe, expect, it } from "vitest";
import { OfflineModel, estimatingCounter, planContext, summarise, systemMessage, type ChatMessage } from "../../workers/agent/index.ts";

// The context core is pure: the same modules run here in workerd as in the Node tests.
describe("context planning in workerd", () => {
  it("estimates tokens, plans a request under the budget and folds with the offline summariser", async () => {
    const counter = estimatingCounter();
    expect(counter.count("hello world")).toBe(2);
    const history: ChatMessage[] = Array.from({ length: 40 }, (_, i) => [
      { role: "user" as const, content: `Question ${i}: ${"tell me about the edge ".repeat(40)}` },
      { role: "assistant" as const, content: `Answer ${i}. ${"it runs close to users ".repeat(40)}` },
    ]).flat();
    const system = systemMessage({ now: Date.UTC(2026, 11, 1), where: { platform: "discord", chatType: "channel" } });
    const plan = planContext({ system, history, modelId: "offline", counter, budget: 8_000 });
    expect(plan.tokens).toBeLessThanOrEqual(plan.limit);
    expect(plan.fold).not.toBeNull();
    const summary = await summarise(new OfflineModel({ delayMs: 0 }), null, history.slice(0, plan.fold!.upTo));
    expect(summary).toMatch(/^- User: Question 0:/);
  });
});
