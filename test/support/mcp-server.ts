import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { z } from "zod";

/**
 * What a test MCP server saw, as a list of event names, with waiters: a test waits for the
 * event it needs ("call:slow", "aborted:slow", "http-closed"), never for a delay.
 */
export class ServerLog {
  readonly events: string[] = [];
  readonly authorizations: (string | null)[] = [];
  readonly #waiters: { name: string; resolve: () => void }[] = [];

  add(name: string): void {
    this.events.push(name);
    for (const w of this.#waiters.filter((x) => x.name === name)) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
  }

  count(name: string): number {
    return this.events.filter((e) => e === name).length;
  }

  /** Resolves once `name` has happened (at once if it already did). */
  next(name: string): Promise<void> {
    if (this.events.includes(name)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ name, resolve }));
  }
}

/** Options of {@link testMcpServer}. */
export interface TestServerOptions {
  log: ServerLog;
  /** Characters returned by the `huge` tool. */
  hugeChars?: number;
}

/**
 * An MCP server (the SDK's own) with the tools the tests use:
 * - `echo {text}` returns the text;
 * - `slow` runs until it is cancelled (it logs `call:slow`, then `aborted:slow`);
 * - `huge` returns `hugeChars` characters;
 * - `whoami` returns the Authorization header it got (a server that leaks what it is sent);
 * - `picture` returns an image block and a text block.
 */
export function testMcpServer(opts: TestServerOptions): McpServer {
  const { log } = opts;
  const server = new McpServer({ name: "test-mcp", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  server.registerTool(
    "echo",
    { description: "Echo the text back.\nSecond line.", inputSchema: { text: z.string().describe("what to echo") } },
    async ({ text }) => {
      log.add("call:echo");
      return { content: [{ type: "text", text }] };
    },
  );
  server.registerTool("slow", { description: "Never finishes on its own." }, (extra) => {
    log.add("call:slow");
    return new Promise((_, reject) => {
      extra.signal.addEventListener("abort", () => {
        log.add("aborted:slow");
        reject(new Error("cancelled"));
      });
    });
  });
  server.registerTool("huge", { description: "A very long answer." }, async () => ({
    content: [{ type: "text", text: "x".repeat(opts.hugeChars ?? 1_000_000) }],
  }));
  server.registerTool("whoami", { description: "Says what credentials it got." }, async (extra) => ({
    content: [{ type: "text", text: `you sent ${String(extra.requestInfo?.headers?.authorization ?? "nothing")}` }],
  }));
  server.registerTool("picture", { description: "A picture." }, async () => ({
    content: [
      { type: "image", data: "aGVsbG8gd29ybGQ=", mimeType: "image/png" },
      { type: "text", text: "a caption" },
    ],
  }));
  return server;
}

/**
 * A Streamable HTTP endpoint on web Request/Response (workerd tests, behind the fake
 * network): one SDK server and transport per MCP session, keyed by `Mcp-Session-Id`.
 * Each request logs `request`, its Authorization header, and `http-closed` when the client
 * aborts it.
 */
export function webMcpHandler(opts: TestServerOptions & { onServer?: (s: McpServer) => void }): (req: Request) => Promise<Response> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return async (req) => {
    opts.log.add("request");
    opts.log.authorizations.push(req.headers.get("authorization"));
    req.signal.addEventListener("abort", () => opts.log.add("http-closed"));
    const id = req.headers.get("mcp-session-id");
    let transport = id ? sessions.get(id) : undefined;
    if (!transport) {
      if (id) return new Response("unknown session", { status: 404 });
      const t = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => void sessions.set(sid, t),
      });
      const server = testMcpServer(opts);
      await server.connect(t);
      opts.onServer?.(server);
      transport = t;
    }
    return transport.handleRequest(req);
  };
}
