import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { edgeMcpSource, type McpToolSource } from "../../workers/agent/mcp/index.ts";
import type { Tool, ToolListing } from "../../workers/agent/index.ts";
import { deadUrl, startFailingServer, startLegacySseMcp, startLoopbackMcp, startSilentServer, type LoopbackMcp } from "../support/mcp-http.ts";
import { ManualClock } from "../support/manual-clock.ts";

const TOKEN = "tok-3f9a1c5e7b";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(opts: Parameters<typeof startLoopbackMcp>[0] = {}): Promise<LoopbackMcp> {
  const s = await startLoopbackMcp(opts);
  cleanups.push(() => s.close());
  return s;
}

/** A source over `servers` (name → url), with the docs server's token, a manual clock and a captured log. */
function source(servers: Record<string, string>, opts: Parameters<typeof edgeMcpSource>[1] & { env?: Record<string, string> } = {}) {
  const clock = new ManualClock();
  const logged: string[] = [];
  const env = { MCP_SERVERS: JSON.stringify(Object.entries(servers).map(([name, url]) => ({ name, url }))), MCP_TOKEN_DOCS: TOKEN, ...opts.env };
  const src = edgeMcpSource(env, { clock, log: (l) => void logged.push(l), ...opts })!;
  cleanups.push(() => src.close());
  return { src, clock, logged };
}

function byName(listing: ToolListing, name: string): Tool {
  const t = listing.tools.find((x) => x.schema.function.name === name);
  if (!t) throw new Error(`no tool ${name} in ${listing.tools.map((x) => x.schema.function.name).join(", ")}`);
  return t;
}

const ctx = (signal?: AbortSignal) => ({ fetch, ...(signal ? { signal } : {}) });

describe("MCP client over Streamable HTTP", () => {
  it("lists a server's tools namespaced with sanitised schemas, and calls them", async () => {
    const docs = await server();
    const { src } = source({ docs: docs.url });
    const listing = await src.list();
    expect(listing.notes).toEqual([]);
    expect(listing.tools.map((t) => t.schema.function.name)).toEqual(["docs__echo", "docs__slow", "docs__huge", "docs__whoami", "docs__picture"]);
    const echo = byName(listing, "docs__echo");
    expect(echo.server).toBe("docs");
    expect(echo.schema.function.description).toBe("Echo the text back.\nSecond line.");
    expect(echo.schema.function.parameters).toEqual({
      type: "object",
      properties: { text: { type: "string", description: "what to echo" } },
      required: ["text"],
    });
    expect(byName(listing, "docs__slow").schema.function.parameters).toMatchObject({ type: "object", properties: {} });
    expect(await echo.run({ text: "hello" }, ctx())).toBe("hello");
    expect(await byName(listing, "docs__picture").run({}, ctx())).toBe("[image: image/png, 11 bytes]\na caption");
    // Listed once: the next turn uses the cached list and sends nothing.
    const requests = docs.log.count("request");
    await src.list();
    expect(docs.log.count("request")).toBe(requests);
  });

  it("an aborted call cancels the server's request: the HTTP request closes and the handler sees notifications/cancelled", async () => {
    const docs = await server();
    const { src } = source({ docs: docs.url });
    const slow = byName(await src.list(), "docs__slow");
    const ctrl = new AbortController();
    const running = slow.run({}, ctx(ctrl.signal));
    await docs.log.next("call:slow");
    ctrl.abort(new Error("stopped by /stop"));
    await expect(running).rejects.toThrow("stopped by /stop");
    await docs.log.next("http-closed");
    await docs.log.next("aborted:slow");
    expect(docs.log.count("aborted:slow")).toBe(1);
  });

  it("a call slower than TOOL_TIMEOUT_MS ends with an error result and is cancelled on the server", async () => {
    const docs = await server();
    const { src, clock } = source({ docs: docs.url }, { env: { TOOL_TIMEOUT_MS: "5000" } });
    const slow = byName(await src.list(), "docs__slow");
    const running = slow.run({}, ctx());
    await docs.log.next("call:slow");
    clock.advance(5_000);
    expect(JSON.parse(await running)).toEqual({ error: "docs: no answer within 5000 ms" });
    await docs.log.next("aborted:slow");
  });

  it("falls back to the older HTTP+SSE transport when a server refuses Streamable HTTP", async () => {
    const old = await startLegacySseMcp();
    cleanups.push(() => old.close());
    const { src } = source({ docs: old.url });
    const listing = await src.list();
    expect(listing.notes).toEqual([]);
    expect(await byName(listing, "docs__echo").run({ text: "over sse" }, ctx())).toBe("over sse");
    expect(old.log.count("sse-open")).toBe(1);
    expect(old.log.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
  });

  it("servers that are down leave notes and no tools; the others work", async () => {
    const docs = await server();
    const failing = await startFailingServer(503);
    cleanups.push(() => failing.close());
    const { src, logged } = source({ docs: docs.url, refused: await deadUrl(), broken: failing.url });
    const { tools, notes } = await src.list();
    expect(new Set(tools.map((t) => t.server))).toEqual(new Set(["docs"]));
    expect(notes).toEqual([
      expect.stringMatching(/^tools of server refused are unavailable: cannot reach the server \(.+\)$/),
      "tools of server broken are unavailable: the server failed (HTTP 503)",
    ]);
    expect(logged.some((l) => l.includes("server broken"))).toBe(true);
  });

  it("a server that does not answer while its tools are listed is left out after the listing deadline", async () => {
    const silent = await startSilentServer();
    cleanups.push(() => silent.close());
    const { src, clock } = source({ silent: silent.url });
    const listing = src.list();
    await silent.log.next("request");
    clock.advance(10_000);
    expect(await listing).toEqual({ tools: [], notes: ["tools of server silent are unavailable: no answer within 10000 ms"] });
  });

  it("caps a huge result in characters, and refuses an answer over the byte limit", async () => {
    const docs = await server({ hugeChars: 300_000 });
    const { src } = source({ docs: docs.url });
    const capped = await byName(await src.list(), "docs__huge").run({}, ctx());
    expect(capped).toHaveLength(20_000 + "\n[… result truncated: 280000 more characters]".length);
    expect(capped.endsWith("[… result truncated: 280000 more characters]")).toBe(true);
    const small = source({ docs: docs.url }, { maxResponseBytes: 100_000 }).src;
    const refused = await byName(await small.list(), "docs__huge").run({}, ctx());
    expect(JSON.parse(refused)).toEqual({ error: "docs: the server's answer is larger than 100000 bytes" });
  });

  it("picks up a changed tool list on notifications/tools/list_changed, and after the TTL", async () => {
    const docs = await server();
    let changed: () => void = () => {};
    const notified = new Promise<void>((resolve) => (changed = resolve));
    const { src, clock } = source({ docs: docs.url }, { onListChanged: () => changed() });
    expect((await src.list()).tools).toHaveLength(5);
    docs.servers[0]!.registerTool("added", { description: "New.", inputSchema: { n: z.number() } }, async ({ n }) => ({
      content: [{ type: "text", text: String(n * 2) }],
    }));
    await notified;
    const after = await src.list();
    expect(await byName(after, "docs__added").run({ n: 21 }, ctx())).toBe("42");

    const lists = () => docs.log.count("request");
    const before = lists();
    await src.list();
    expect(lists()).toBe(before); // cached
    clock.advance(5 * 60_000);
    await src.list();
    expect(lists()).toBe(before + 1); // listed again after the TTL
  });

  it("sends the bearer token to its server, and it never shows in results, notes, errors or logs", async () => {
    const docs = await server();
    const rejecting = await startFailingServer(401, `invalid token ${TOKEN}`);
    cleanups.push(() => rejecting.close());
    const lines: string[] = [];
    for (const level of ["log", "warn", "error", "info", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...a: unknown[]) => void lines.push(a.map(String).join(" ")));
    // No log option: failures go to console.warn, which is captured here.
    const env = {
      MCP_SERVERS: JSON.stringify([
        { name: "docs", url: docs.url },
        { name: "other", url: rejecting.url },
      ]),
      MCP_TOKEN_DOCS: TOKEN,
      MCP_TOKEN_OTHER: TOKEN,
    };
    const src: McpToolSource = edgeMcpSource(env, { clock: new ManualClock() })!;
    cleanups.push(() => src.close());
    const listing = await src.list();
    expect(docs.log.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    expect(rejecting.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const leaked = await byName(listing, "docs__whoami").run({}, ctx());
    expect(leaked).toBe("you sent Bearer [redacted]");
    expect(listing.notes).toEqual(["tools of server other are unavailable: the server refused the credentials (HTTP 401); check the secret MCP_TOKEN_OTHER"]);
    const everything = [leaked, ...listing.notes, ...lines, JSON.stringify(listing.tools.map((t) => t.schema))].join("\n");
    expect(lines.length).toBeGreaterThan(0);
    expect(everything).not.toContain(TOKEN);
    vi.restoreAllMocks();
  });
});
