import { describe, expect, it } from "vitest";
import {
  OpenAiModel,
  ToolRegistry,
  formatToolList,
  listTools,
  runTurn,
  summarizeCall,
  toolError,
  type ChatMessage,
  type Tool,
  type ToolSource,
  type TurnEvent,
} from "../../workers/agent/index.ts";
import { FakeLlm } from "../support/fake-llm.ts";

function tool(name: string, server?: string, reply = `${name} ran`): Tool {
  return {
    ...(server ? { server } : {}),
    schema: { type: "function", function: { name, description: `Does ${name}.\nMore detail.`, parameters: { type: "object", properties: {} } } },
    run: async () => reply,
  };
}

const source = (tools: Tool[], notes: string[] = []): ToolSource => ({ list: async () => ({ tools, notes }) });

describe("tool call summaries", () => {
  it("show the only argument's value, or key=value pairs, on one line of at most 80 characters", () => {
    expect(summarizeCall("fetch_url", '{"url":"https://example.com/a"}')).toBe("fetch_url https://example.com/a");
    expect(summarizeCall("docs__search", '{"query":"two\\nlines","limit":5}')).toBe('docs__search query="two\\nlines" limit=5');
    const long = summarizeCall("fetch_url", JSON.stringify({ url: `https://example.com/${"x".repeat(200)}` }));
    expect(long).toHaveLength(80);
    expect(long.endsWith("…")).toBe(true);
    expect(summarizeCall("t", "not json")).toBe("t");
  });

  it("mask values of secret-looking keys at any depth, and secret parts of URLs", () => {
    const s = summarizeCall("api__call", JSON.stringify({ q: "ok", api_key: "k-123", nested: { accessToken: "t-456", keyword: "visible" } }));
    expect(s).not.toMatch(/k-123|t-456/);
    expect(s).toContain("visible");
    expect(summarizeCall("api__login", '{"password":"hunter2"}')).toBe("api__login password=***");
    const url = summarizeCall("fetch_url", '{"url":"https://u:pw@example.com/x?token=abc&page=2"}');
    expect(url).not.toMatch(/pw@|abc/);
    expect(url).toContain("page=2");
  });
});

describe("a registry with tool sources", () => {
  it("offers built-in tools and each source's tools; a failing source becomes a note, never an error", async () => {
    const failing: ToolSource = { list: async () => Promise.reject(new Error("boom")) };
    const registry = new ToolRegistry([tool("fetch_url")], [source([tool("docs__search", "docs")], ["tools of server wiki are unavailable: down"]), failing]);
    const listing = await listTools(registry);
    expect(listing.tools).toEqual([
      { name: "fetch_url", server: null, description: "Does fetch_url." },
      { name: "docs__search", server: "docs", description: "Does docs__search." },
    ]);
    expect(listing.notes).toEqual(["tools of server wiki are unavailable: down", "some tools are unavailable: boom"]);
    expect(formatToolList(listing)).toBe(
      "fetch_url: Does fetch_url.\ndocs__search (docs): Does docs__search.\n(tools of server wiki are unavailable: down)\n(some tools are unavailable: boom)",
    );
  });

  it("keeps the first of two tools with one name, and at most 128 tools", async () => {
    const many = Array.from({ length: 130 }, (_, i) => tool(`s__t${i}`, "s"));
    const set = await new ToolRegistry([tool("s__t0")], [source(many)]).forTurn();
    expect(set.schemas()).toHaveLength(128);
    expect(set.notes).toEqual([
      "tool s__t0 is offered twice; only the first is available",
      "2 more tools are unavailable: at most 128 tools can be offered at once",
    ]);
  });

  it("a turn lists the sources first, tells the model what is missing without storing it, and summarises calls in events", async () => {
    const llm = new FakeLlm();
    const model = new OpenAiModel({ baseUrl: "https://llm.example/v1", model: "m", fetch: (i, init) => llm.handle(new Request(i, init)) });
    llm.then({ kind: "tools", calls: [{ id: "c1", name: "docs__search", arguments: '{"query":"mcp","token":"s3cret"}' }] }).text("done");
    const stored: ChatMessage[] = [];
    const events: TurnEvent[] = [];
    const registry = new ToolRegistry([], [source([tool("docs__search", "docs", "found it")], ["tools of server wiki are unavailable: HTTP 503"])]);
    const out = await runTurn({
      model,
      tools: registry,
      history: [{ role: "user", content: "search" }],
      append: async (m) => void stored.push(m),
      onEvent: (e) => void events.push(e),
    });
    expect(out.finishReason).toBe("stop");
    for (const call of llm.calls) {
      expect(call.body.messages.at(-1)).toEqual({ role: "system", content: "tools of server wiki are unavailable: HTTP 503" });
      expect((call.body.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(["docs__search"]);
    }
    expect(stored.map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
    expect(stored[1]!.content).toBe("found it");
    const tools = events.filter((e) => e.type === "tool");
    expect(tools).toEqual([
      { type: "tool", phase: "start", name: "docs__search", id: "c1", summary: 'docs__search query="mcp" token=***' },
      { type: "tool", phase: "end", name: "docs__search", id: "c1", summary: 'docs__search query="mcp" token=***' },
    ]);
  });

  it("a source slower than the turn's abort does not hold the turn", async () => {
    const hanging: ToolSource = { list: () => new Promise(() => {}) };
    const ctrl = new AbortController();
    const listing = new ToolRegistry([tool("fetch_url")], [hanging]).forTurn(ctrl.signal);
    ctrl.abort();
    expect((await listing).schemas().map((s) => s.function.name)).toEqual(["fetch_url"]);
    expect(toolError("x")).toBe('{"error":"x"}');
  });
});
