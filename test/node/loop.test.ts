import { describe, expect, it } from "vitest";
import { runTurn, ToolRegistry, fetchUrlTool, type ChatMessage } from "../../workers/agent/index.ts";
import { OpenAiModel } from "../../workers/agent/index.ts";
import { FakeLlm } from "../support/fake-llm.ts";

function setup() {
  const llm = new FakeLlm();
  const model = new OpenAiModel({ baseUrl: "https://llm.example/v1", model: "m", fetch: (i, init) => llm.handle(new Request(i, init)) });
  const stored: ChatMessage[] = [];
  const page = async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    return url === "https://docs.example/page"
      ? new Response("<html><body><h1>Title</h1><p>Body text</p></body></html>", { headers: { "content-type": "text/html" } })
      : new Response("nope", { status: 404 });
  };
  const tools = new ToolRegistry([fetchUrlTool()]);
  return { llm, model, stored, page, tools, append: async (m: ChatMessage) => void stored.push(m) };
}

describe("the tool-calling loop", () => {
  it("runs a tool round and feeds the result back, storing each message in order", async () => {
    const { llm, model, stored, page, tools, append } = setup();
    llm.then({ kind: "tools", calls: [{ id: "c1", name: "fetch_url", arguments: '{"url":"https://docs.example/page"}' }] }).text("The page says Body text.");
    const out = await runTurn({ model, tools, history: [{ role: "user", content: "read it" }], append, fetch: page as typeof fetch });
    expect(out).toMatchObject({ finishReason: "stop", text: "The page says Body text.", toolCalls: 1 });
    expect(stored.map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
    expect(JSON.parse(stored[1]!.content!)).toMatchObject({ status: 200, text: "Title\nBody text" });
    const second = llm.calls[1]!.body.messages;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(second[2]!.tool_call_id).toBe("c1");
  });

  it("stops after maxSteps model calls instead of looping forever", async () => {
    const { llm, model, stored, page, tools, append } = setup();
    const call = { kind: "tools", calls: [{ id: "x", name: "fetch_url", arguments: '{"url":"https://docs.example/page"}' }] } as const;
    llm.then(call, call, call);
    const out = await runTurn({ model, tools, history: [{ role: "user", content: "loop" }], append, fetch: page as typeof fetch, maxSteps: 2 });
    expect(out.finishReason).toBe("length");
    expect(stored.at(-1)).toMatchObject({ role: "assistant", finish_reason: "length" });
  });

  it("reports provider failures as an outcome, keeping streamed text", async () => {
    const { llm, model, stored, append } = setup();
    llm.then({ kind: "http", status: 401, body: "{}" });
    const out = await runTurn({ model, history: [{ role: "user", content: "hi" }], append });
    expect(out).toMatchObject({ finishReason: "error", error: { code: "provider_auth" } });
    expect(stored).toEqual([]);
  });
});

describe("regression: an interrupt during a tool call left no interrupted reply", () => {
  it("ends the turn with an interrupted assistant message, and the transcript stays valid", async () => {
    const { llm, model, stored, tools, append } = setup();
    llm.then({ kind: "tools", calls: [{ id: "t1", name: "fetch_url", arguments: '{"url":"https://docs.example/slow"}' }] });
    const ctrl = new AbortController();
    const slow = (async (_i: unknown, init?: RequestInit) => {
      ctrl.abort();
      throw init?.signal?.reason ?? new Error("aborted");
    }) as typeof fetch;
    const out = await runTurn({ model, tools, history: [{ role: "user", content: "go" }], append, fetch: slow, signal: ctrl.signal });
    expect(out.finishReason).toBe("interrupted");
    expect(stored.at(-1)).toEqual({ role: "assistant", content: "", finish_reason: "interrupted" });
    const { repairTranscript, transcriptProblem } = await import("../../workers/agent/index.ts");
    expect(transcriptProblem(repairTranscript([{ role: "user", content: "go" }, ...stored]))).toBeNull();
  });
});
