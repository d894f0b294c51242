import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderError, ToolRegistry, WorkersAiModel, createModel, modelId, runTurn, type ChatMessage, type Tool } from "../../workers/agent/index.ts";
import { FakeAi } from "../support/fake-ai.ts";

const MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const noSleep = async () => {};

function model(ai: FakeAi) {
  return new WorkersAiModel({ ai, model: MODEL, sleep: noSleep });
}

const lookup: Tool = {
  schema: {
    type: "function",
    function: { name: "lookup", description: "Look a word up.", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
  },
  run: async (args) => `definition of ${String(args.q)}`,
};

describe("Workers AI provider", () => {
  it("streams text through the binding and reports usage", async () => {
    const ai = new FakeAi().text("Hel", "lo", " there");
    const pieces: string[] = [];
    const out = await model(ai).complete({ messages: [{ role: "user", content: "hi" }], onText: (t) => void pieces.push(t) });
    expect(pieces).toEqual(["Hel", "lo", " there"]);
    expect(out).toEqual({ content: "Hello there", toolCalls: [], finishReason: "stop", usage: { input: 7, output: 3 } });
    expect(ai.calls[0]).toEqual({ model: MODEL, inputs: { messages: [{ role: "user", content: "hi" }], stream: true } });
  });

  it("a text model is told the images that came with a message are not shown to it", async () => {
    const ai = new FakeAi().text("ok");
    const attached = { images: [{ type: "image_url" as const, image_url: { url: "data:image/png;base64,AA" } }], files: [] };
    await model(ai).complete({ messages: [{ role: "user", content: "what is this?", attached }] });
    expect(ai.calls[0]!.inputs.messages).toEqual([{ role: "user", content: "what is this?\n\n(The images attached above are not shown to this model.)" }]);
  });

  it("runs a tool round: tools go out in OpenAI form, the call from the final chunk comes back, the result goes in", async () => {
    const ai = new FakeAi()
      .then({ kind: "stream", chunks: [{ response: "" }, { response: "", tool_calls: [{ name: "lookup", arguments: { q: "edge" } }] }] })
      .text("Edge means border.");
    const stored: ChatMessage[] = [];
    const out = await runTurn({
      model: model(ai),
      tools: new ToolRegistry([lookup]),
      history: [{ role: "user", content: "define edge" }],
      append: async (m) => void stored.push(m),
    });
    expect(out).toMatchObject({ finishReason: "stop", text: "Edge means border.", toolCalls: 1 });
    expect(ai.calls[0]!.inputs.tools).toEqual([lookup.schema]);
    const second = ai.calls[1]!.inputs.messages as Record<string, unknown>[];
    expect(second.slice(1)).toEqual([
      { role: "assistant", content: "", tool_calls: [{ id: "call_0", type: "function", function: { name: "lookup", arguments: '{"q":"edge"}' } }] },
      { role: "tool", content: "definition of edge", tool_call_id: "call_0", name: "lookup" },
    ]);
  });

  it("puts together tool calls streamed in OpenAI's pieces", async () => {
    const ai = new FakeAi().then({
      kind: "stream",
      chunks: [
        { choices: [{ delta: { tool_calls: [{ index: 0, id: "t1", type: "function", function: { name: "lookup", arguments: "" } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '"x"}' } }] }, finish_reason: "tool_calls" }] },
        { tool_calls: [{ id: null, type: null, function: { name: null } }] },
      ],
    });
    const out = await model(ai).complete({ messages: [{ role: "user", content: "q" }], tools: [lookup.schema] });
    expect(out.toolCalls).toEqual([{ id: "t1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }]);
    expect(out.finishReason).toBe("tool_calls");
  });

  it("maps binding errors to ProviderErrors: capacity is retried, a bad model name is not", async () => {
    const busy = new FakeAi().then({ kind: "error", message: "3040: Capacity temporarily exceeded, please try again." }).text("ok");
    expect((await model(busy).complete({ messages: [{ role: "user", content: "hi" }] })).content).toBe("ok");
    expect(busy.calls).toHaveLength(2);

    const wrong = new FakeAi().then({ kind: "error", message: "AiError: 5007: No such model @cf/nope or task" });
    const err = await model(wrong)
      .complete({ messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ code: "provider_rejected", message: expect.stringContaining("check LLM_MODEL") });
    expect(wrong.calls).toHaveLength(1);
  });

  it("sends no tools again to a model that refused them", async () => {
    const ai = new FakeAi()
      .then({ kind: "error", message: "5006: Error: oneOf at '/' not met; unexpected property 'tools'" })
      .text("plain", " answer")
      .text("again");
    const m = model(ai);
    expect((await m.complete({ messages: [{ role: "user", content: "hi" }], tools: [lookup.schema] })).content).toBe("plain answer");
    await m.complete({ messages: [{ role: "user", content: "hi" }], tools: [lookup.schema] });
    expect(ai.calls.map((c) => "tools" in c.inputs)).toEqual([true, false, false]);
  });

  it("an abort mid-stream ends the reply as interrupted with the text so far, and reaches the binding", async () => {
    const ai = new FakeAi().then({ kind: "hold", first: [{ response: "Partial " }] });
    const ctrl = new AbortController();
    const out = await model(ai).complete({ messages: [{ role: "user", content: "hi" }], signal: ctrl.signal, onText: () => ctrl.abort() });
    expect(out).toEqual({ content: "Partial ", toolCalls: [], finishReason: "interrupted" });
    expect(ai.aborted).toBe(true);
  });

  it("regression: an interrupted Workers AI turn dropped the usage it had streamed; it keeps it, as the OpenAI client does", async () => {
    const ai = new FakeAi().then({ kind: "hold", first: [{ response: "Partial ", usage: { prompt_tokens: 12, completion_tokens: 1 } }] });
    const ctrl = new AbortController();
    const out = await model(ai).complete({ messages: [{ role: "user", content: "hi" }], signal: ctrl.signal, onText: () => ctrl.abort() });
    expect(out).toEqual({ content: "Partial ", toolCalls: [], finishReason: "interrupted", usage: { input: 12, output: 1 } });
  });

  it("times out a binding that goes silent mid-stream, keeping the text so far", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const ai = new FakeAi().then({ kind: "hold", first: [{ response: "first " }] });
    const silent = new WorkersAiModel({ ai, model: MODEL, sleep: noSleep, idleTimeoutMs: 30_000 });
    const p = silent.complete({ messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(31_000);
    expect(await p).toMatchObject({ code: "provider_timeout", message: "Workers AI sent nothing for 30s", partial: "first " });
    expect(ai.aborted).toBe(true);
  });

  it("backs off 0.5 s then 1 s on capacity errors, and never retries a spent daily allocation", async () => {
    const sleeps: number[] = [];
    const busy = new FakeAi().then(...Array.from({ length: 3 }, () => ({ kind: "error" as const, message: "3040: Capacity temporarily exceeded" })));
    const counted = new WorkersAiModel({ ai: busy, model: MODEL, sleep: async (ms) => void sleeps.push(ms) });
    const err = await counted.complete({ messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "provider_rate_limited" });
    expect(sleeps).toEqual([500, 1000]);

    const spent = new FakeAi().then({ kind: "error", message: "3036: You have used up your daily free allocation" }).text("never");
    await expect(model(spent).complete({ messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ code: "provider_rate_limited" });
    expect(spent.calls).toHaveLength(1);
  });

  it("an interrupt during the wait between attempts resolves as interrupted, without another call", async () => {
    const ai = new FakeAi().then({ kind: "error", message: "3040: Capacity temporarily exceeded" }).text("late");
    const ctrl = new AbortController();
    const sleep = async (_ms: number, signal?: AbortSignal) => {
      ctrl.abort();
      throw signal?.reason;
    };
    const out = await new WorkersAiModel({ ai, model: MODEL, sleep }).complete({ messages: [{ role: "user", content: "hi" }], signal: ctrl.signal });
    expect(out).toEqual({ content: "", toolCalls: [], finishReason: "interrupted" });
    expect(ai.calls).toHaveLength(1);
  });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("provider selection (LLM_PROVIDER)", () => {
  it("defaults to openai with LLM_BASE_URL and offline without; workers-ai needs the binding", () => {
    expect(createModel({ baseUrl: "https://llm.example/v1" }).id).toBe("gpt-4o-mini");
    expect(createModel({}).id).toBe("offline");
    expect(createModel({ provider: "workers-ai", ai: new FakeAi() }).id).toBe(MODEL);
    expect(modelId({ provider: "workers-ai", ai: new FakeAi(), model: "@cf/x/y" })).toBe("@cf/x/y");
    expect(() => createModel({ provider: "workers-ai" })).toThrow(
      expect.objectContaining({ code: "provider_not_configured", message: expect.stringContaining('[ai] binding = "AI"') }),
    );
    expect(() => createModel({ provider: "openai" })).toThrow("LLM_PROVIDER=openai needs LLM_BASE_URL");
    expect(() => createModel({ provider: "gemini" })).toThrow("LLM_PROVIDER must be one of openai, workers-ai, offline (got 'gemini')");
  });
});
