import { afterEach, describe, expect, it, vi } from "vitest";
import { OpenAiModel, ProviderError, type ModelResult } from "../../workers/agent/index.ts";
import { FakeLlm } from "../support/fake-llm.ts";

const BASE = "https://llm.example/v1";

function model(llm: FakeLlm, extra: Partial<ConstructorParameters<typeof OpenAiModel>[0]> = {}) {
  const sleeps: number[] = [];
  const m = new OpenAiModel({
    baseUrl: BASE,
    apiKey: "sk-test",
    model: "m1",
    fetch: (input, init) => llm.handle(new Request(input, init)),
    sleep: async (ms) => void sleeps.push(ms),
    ...extra,
  });
  return { m, sleeps };
}

const user = [{ role: "user" as const, content: "hi" }];

async function failure(p: Promise<ModelResult>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("OpenAI-compatible streaming client", () => {
  it("a reply that came in one read: a reader that asks for a pause after the first words gets it before the rest is parsed", async () => {
    // Before: the whole reply was parsed (and the turn ended) before anything waiting for
    // I/O could run, so an API caller had the first words 4-5 ms late (bench:turn).
    const llm = new FakeLlm().then({ kind: "text", chunks: ["Hel", "lo", " there"] });
    const order: string[] = [];
    const onText = (t: string): Promise<void> | undefined => {
      order.push(t);
      if (order.length > 1) return undefined;
      setTimeout(() => order.push("(I/O)"), 0);
      return new Promise((resolve) => setTimeout(resolve, 0));
    };
    const res = await model(llm).m.complete({ messages: user, onText });
    expect(order).toEqual(["Hel", "(I/O)", "lo", " there"]);
    expect(res.content).toBe("Hello there");
  });

  it("streams text pieces as they arrive and returns the whole reply with usage", async () => {
    const llm = new FakeLlm().then({ kind: "text", chunks: ["Hel", "lo"], usage: { prompt_tokens: 7, completion_tokens: 2 } });
    const pieces: string[] = [];
    const res = await model(llm).m.complete({ messages: user, onText: (t) => void pieces.push(t) });
    expect(pieces).toEqual(["Hel", "lo"]);
    expect(res).toEqual({ content: "Hello", toolCalls: [], finishReason: "stop", usage: { input: 7, output: 2 } });
    expect(llm.calls[0]!.authorization).toBe("Bearer sk-test");
    expect(llm.calls[0]!.body).toMatchObject({ model: "m1", stream: true, messages: [{ role: "user", content: "hi" }] });
  });

  it("assembles tool calls streamed in fragments", async () => {
    const llm = new FakeLlm().then({ kind: "tools", calls: [{ id: "c1", name: "fetch_url", arguments: '{"url":"https://a.example"}' }] });
    const res = await model(llm).m.complete({ messages: user });
    expect(res.finishReason).toBe("tool_calls");
    expect(res.toolCalls).toEqual([{ id: "c1", type: "function", function: { name: "fetch_url", arguments: '{"url":"https://a.example"}' } }]);
  });

  it("accepts a server that ignores stream:true and answers one JSON completion", async () => {
    const body = JSON.stringify({ choices: [{ message: { content: "whole" }, finish_reason: "stop" }] });
    const llm = new FakeLlm().then({ kind: "http", status: 200, body });
    expect((await model(llm).m.complete({ messages: user })).content).toBe("whole");
  });

  it("turns 401 into provider_auth without retrying, and never echoes the key", async () => {
    const llm = new FakeLlm().then({ kind: "http", status: 401, body: JSON.stringify({ error: { message: "invalid key" } }) });
    const err = await failure(model(llm).m.complete({ messages: user }));
    expect(err.code).toBe("provider_auth");
    expect(err.message).toContain("LLM_API_KEY");
    expect(err.message).not.toContain("sk-test");
    expect(llm.calls).toHaveLength(1);
  });

  it("retries 429 after the retry-after the provider asked for, then succeeds", async () => {
    const llm = new FakeLlm().then({ kind: "http", status: 429, body: "{}", headers: { "retry-after": "2" } });
    const { m, sleeps } = model(llm);
    expect((await m.complete({ messages: user })).content).toBe("echo: hi");
    expect(sleeps).toEqual([2000]);
  });

  it("reports a 429 that asks for a long wait instead of hanging", async () => {
    const llm = new FakeLlm().then({ kind: "http", status: 429, body: "{}", headers: { "retry-after": "120" } });
    const err = await failure(model(llm).m.complete({ messages: user }));
    expect(err.code).toBe("provider_rate_limited");
    expect(err.retryAfter).toBe(120);
  });

  it("gives up on repeated 5xx with provider_unavailable after backing off", async () => {
    const five = { kind: "http", status: 502, body: "bad gateway" } as const;
    const llm = new FakeLlm().then(five, five, five);
    const { m, sleeps } = model(llm);
    const err = await failure(m.complete({ messages: user }));
    expect(err.code).toBe("provider_unavailable");
    expect(sleeps).toEqual([500, 1000]);
    expect(llm.calls).toHaveLength(3);
  });

  it("maps a refused connection to provider_unreachable", async () => {
    const m = new OpenAiModel({ baseUrl: BASE, model: "m", maxRetries: 0, fetch: async () => Promise.reject(new TypeError("fetch failed")) });
    expect((await failure(m.complete({ messages: user }))).code).toBe("provider_unreachable");
  });

  it("rejects a malformed stream with provider_bad_stream", async () => {
    const llm = new FakeLlm().then({ kind: "garbage" });
    expect((await failure(model(llm).m.complete({ messages: user }))).code).toBe("provider_bad_stream");
  });

  it("keeps the partial text of a stream that ends early", async () => {
    const early = 'data: {"choices":[{"delta":{"content":"half"}}]}\n\n';
    const m = new OpenAiModel({ baseUrl: BASE, model: "m", fetch: async () => new Response(early, { headers: { "content-type": "text/event-stream" } }) });
    const err = await failure(m.complete({ messages: user }));
    expect(err.code).toBe("provider_bad_stream");
    expect(err.partial).toBe("half");
  });

  it("resolves an aborted call as interrupted with the partial text, and cancels the stream", async () => {
    const llm = new FakeLlm();
    const gate = llm.hold(["par", "tial"]);
    const ctrl = new AbortController();
    const res = await model(llm).m.complete({
      messages: user,
      signal: ctrl.signal,
      onText: (t) => {
        if (t === "tial") ctrl.abort();
      },
    });
    expect(res).toMatchObject({ content: "partial", finishReason: "interrupted", toolCalls: [] });
    expect(gate.cancelled).toBe(true);
  });

  it("times out a provider that goes silent, instead of hanging", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const llm = new FakeLlm();
    llm.hold(["first "]);
    const p = failure(model(llm, { idleTimeoutMs: 30_000 }).m.complete({ messages: user }));
    await vi.advanceTimersByTimeAsync(31_000);
    const err = await p;
    expect(err.code).toBe("provider_timeout");
    expect(err.partial).toBe("first ");
  });
});
