/**
 * Every shape of streamed delta OpenAI-compatible providers send. Payloads follow the
 * providers' public docs:
 * - Mistral, "Reasoning" (https://docs.mistral.ai/capabilities/reasoning/): Magistral models
 *   stream `delta.content` as typed parts, `{"type":"thinking","thinking":[{"type":"text",…}]}`
 *   then `{"type":"text","text":…}`.
 * - OpenAI, "Streaming" / `stream_options.include_usage`
 *   (https://platform.openai.com/docs/api-reference/chat-streaming): the last chunk before
 *   `[DONE]` carries `usage` and has `choices: []`.
 * - OpenRouter, "Streaming: error handling during streaming"
 *   (https://openrouter.ai/docs/api-reference/streaming): a mid-stream error is a chunk with a
 *   top-level `error` and `finish_reason: "error"`; providers that bill the failed call add
 *   `usage` to it (the shape the issue's probe saw).
 */
import { describe, expect, it } from "vitest";
import { OpenAiModel, ProviderError, WorkersAiModel, runTurn, type ChatMessage } from "../../workers/agent/index.ts";
import { chunkUsage, deltaText } from "../../workers/agent/sse.ts";
import { FakeAi } from "../support/fake-ai.ts";
import { FakeLlm } from "../support/fake-llm.ts";

const user = [{ role: "user" as const, content: "what is 2 + 2?" }];
const sse = (chunks: unknown[]) => [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"].join("");

function openai(chunks: unknown[]) {
  const llm = new FakeLlm().then({ kind: "http", status: 200, body: sse(chunks), headers: { "content-type": "text/event-stream" } });
  return new OpenAiModel({
    baseUrl: "https://llm.example/v1",
    model: "magistral-medium-latest",
    fetch: (i, init) => llm.handle(new Request(i, init)),
    sleep: async () => {},
  });
}

const base = { id: "c1", object: "chat.completion.chunk", created: 1750000000, model: "magistral-medium-latest" };
/** Mistral's reasoning stream: a thinking part, then the answer as text parts, then usage. */
const mistral = [
  { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
  {
    ...base,
    choices: [{ index: 0, delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: "Adding two and two." }] }] }, finish_reason: null }],
  },
  { ...base, choices: [{ index: 0, delta: { content: [{ type: "text", text: "2 + 2" }] }, finish_reason: null }] },
  {
    ...base,
    choices: [{ index: 0, delta: { content: [{ type: "text", text: " = 4" }] }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 },
  },
];

describe("regression: a reply streamed as typed content parts was stored empty while billed", () => {
  it("joins Mistral's text parts and drops its thinking parts", async () => {
    const pieces: string[] = [];
    const out = await openai(mistral).complete({ messages: user, onText: (t) => void pieces.push(t) });
    expect(out).toEqual({ content: "2 + 2 = 4", toolCalls: [], finishReason: "stop", usage: { input: 12, output: 30 } });
    expect(pieces.join("")).toBe("2 + 2 = 4");
    expect(pieces.join("")).not.toContain("Adding");
  });

  it("reads the same parts through Workers AI's OpenAI-shaped chunks", async () => {
    const ai = new FakeAi().then({ kind: "stream", chunks: mistral });
    const out = await new WorkersAiModel({ ai, model: "@cf/mistral/x", sleep: async () => {} }).complete({ messages: user });
    expect(out).toMatchObject({ content: "2 + 2 = 4", usage: { input: 12, output: 30 } });
  });

  it("deltaText: strings as they are, text parts joined, reasoning and unknown parts dropped", () => {
    expect(deltaText("plain")).toBe("plain");
    expect(
      deltaText([
        { type: "text", text: "a" },
        { type: "reasoning", text: "hidden" },
        { type: "thinking", thinking: [{ type: "text", text: "no" }] },
        { type: "text", text: "b" },
      ]),
    ).toBe("ab");
    expect(deltaText([null, 42, { type: "text", text: 7 }])).toBe("");
    expect(deltaText(null)).toBe("");
    expect(deltaText({ type: "text", text: "not an array" })).toBe("");
  });
});

describe("regression: usage was taken only from chunks with choices, and never from an error chunk", () => {
  it("takes usage from OpenAI's final chunk with choices: []", async () => {
    const chunks = [
      { ...base, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content: "4" }, finish_reason: null }] },
      { ...base, model: "gpt-4o-mini", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
      { ...base, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 } },
    ];
    expect(await openai(chunks).complete({ messages: user })).toEqual({ content: "4", toolCalls: [], finishReason: "stop", usage: { input: 9, output: 1 } });
  });

  it("an error chunk's usage reaches the ProviderError, and the turn records it with the text so far", async () => {
    const chunks = [
      { ...base, choices: [{ index: 0, delta: { content: "2 + " }, finish_reason: null }] },
      {
        ...base,
        error: { code: "server_error", message: "Provider disconnected unexpectedly" },
        choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
        usage: { prompt_tokens: 12, completion_tokens: 3 },
      },
    ];
    const err = await openai(chunks)
      .complete({ messages: user })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).usage).toEqual({ input: 12, output: 3 });
    expect((err as ProviderError).partial).toBe("2 + ");

    const stored: Array<{ m: ChatMessage; u: unknown }> = [];
    const out = await runTurn({ model: openai(chunks), history: user, append: async (m, u) => void stored.push({ m, u }) });
    expect(out).toMatchObject({ finishReason: "error", usage: { input: 12, output: 3 } });
    expect(stored).toEqual([{ m: { role: "assistant", content: "2 + ", finish_reason: "error" }, u: { input: 12, output: 3 } }]);
  });

  it("an error chunk with usage and no text still records the billed tokens", async () => {
    const chunks = [{ error: { message: "overloaded" }, usage: { prompt_tokens: 5, completion_tokens: 0 } }];
    const stored: Array<{ m: ChatMessage; u: unknown }> = [];
    const out = await runTurn({ model: openai(chunks), history: user, append: async (m, u) => void stored.push({ m, u }) });
    expect(out.usage).toEqual({ input: 5, output: 0 });
    expect(stored).toEqual([{ m: { role: "assistant", content: "", finish_reason: "error" }, u: { input: 5, output: 0 } }]);
  });

  it("Workers AI: an error chunk's usage is kept too", async () => {
    const ai = new FakeAi().then({
      kind: "stream",
      chunks: [{ response: "2" }, { error: "3040: capacity", usage: { prompt_tokens: 4, completion_tokens: 1 } }],
    });
    const err = await new WorkersAiModel({ ai, model: "@cf/x", sleep: async () => {}, maxRetries: 0 }).complete({ messages: user }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as ProviderError).usage).toEqual({ input: 4, output: 1 });
  });

  it("chunkUsage ignores absent, null and malformed usage", () => {
    expect(chunkUsage({ usage: null })).toBeUndefined();
    expect(chunkUsage({})).toBeUndefined();
    expect(chunkUsage({ usage: { prompt_tokens: "x", completion_tokens: -1 } })).toEqual({ input: 0, output: 0 });
  });
});
