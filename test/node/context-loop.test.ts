import { describe, expect, it } from "vitest";
import {
  ToolRegistry,
  estimatingCounter,
  planContext,
  runTurn,
  systemMessage,
  type ChatMessage,
  type ChatModel,
  type ModelRequest,
} from "../../workers/agent/index.ts";
import { exactTokens, randomText, rng } from "../support/context-fixtures.ts";

const counter = estimatingCounter();

describe("a turn with many big tool rounds", () => {
  it("keeps every model call of the turn under the budget when runTurn plans each request", async () => {
    const requests: ModelRequest[] = [];
    // Calls the tool five times, then answers.
    const model: ChatModel = {
      id: "gpt-x",
      async complete(req) {
        requests.push(req);
        const step = requests.length;
        if (step <= 5) {
          return {
            content: "",
            toolCalls: [{ id: `c${step}`, type: "function", function: { name: "read", arguments: `{"page":${step}}` } }],
            finishReason: "tool_calls",
          };
        }
        return { content: "Done reading.", toolCalls: [], finishReason: "stop" };
      },
    };
    const rand = rng(11);
    // Each result alone is about a third of the budget.
    const tools = new ToolRegistry([
      {
        schema: {
          type: "function",
          function: { name: "read", description: "Read a page.", parameters: { type: "object", properties: { page: { type: "number" } } } },
        },
        run: async () => randomText(rand, 6_000),
      },
    ]);
    const system = systemMessage({ now: 0, where: { platform: "cli" } });
    const budget = 8_000;
    const stored: ChatMessage[] = [];
    const out = await runTurn({
      model,
      tools,
      history: [{ role: "user", content: "Read pages 1 to 5 and tell me what they say." }],
      append: async (m) => void stored.push(m),
      prepare: (transcript) => planContext({ system, history: transcript, modelId: model.id, counter, budget, tools: tools.schemas() }).messages,
    });
    expect(out.finishReason).toBe("stop");
    expect(requests).toHaveLength(6);
    for (const req of requests) {
      expect(req.messages[0]).toEqual(system);
      expect(exactTokens(req.messages, req.tools)).toBeLessThanOrEqual(budget - budget / 4);
    }
    // Without the plan the last request would have carried all five results whole.
    expect(exactTokens([system, ...stored.slice(0, -1)])).toBeGreaterThan(budget);
  });
});
