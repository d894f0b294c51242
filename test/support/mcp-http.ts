import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ServerLog, testMcpServer, type TestServerOptions } from "./mcp-server.ts";

/** A test MCP server on loopback (Node tests). */
export interface LoopbackMcp {
  url: string;
  log: ServerLog;
  /** The SDK servers, one per MCP session, newest last. */
  servers: McpServer[];
  close(): Promise<void>;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * The SDK's Streamable HTTP server transport behind node:http on 127.0.0.1, at `/mcp`.
 * Each request logs `request` and its Authorization header; a request the client gives up
 * on before the answer is complete logs `http-closed`.
 */
export async function startLoopbackMcp(opts: Partial<TestServerOptions> = {}): Promise<LoopbackMcp> {
  const log = opts.log ?? new ServerLog();
  const servers: McpServer[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    log.add("request");
    log.authorizations.push(req.headers.authorization ?? null);
    res.on("close", () => {
      if (!res.writableEnded) log.add("http-closed");
    });
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === "string") return void res.writeHead(404).end("unknown session");
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => crypto.randomUUID(), onsessioninitialized: (sid) => void sessions.set(sid, t) });
      const server = testMcpServer({ ...opts, log });
      await server.connect(t);
      servers.push(server);
      transport = t;
    }
    await transport.handleRequest(req, res);
  });
  const base = await listen(http);
  return {
    url: `${base}/mcp`,
    log,
    servers,
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
      await stop(http);
    },
  };
}

/**
 * An older server (protocol 2024-11-05, the SDK's deprecated SSE server transport): GET
 * `/sse` opens the event stream, POST `/messages?sessionId=…` carries requests; a POST to
 * `/sse` (a Streamable HTTP client's first try) gets 405. Logs `sse-open` per stream.
 */
export async function startLegacySseMcp(): Promise<{ url: string; log: ServerLog; close(): Promise<void> }> {
  const log = new ServerLog();
  const transports = new Map<string, SSEServerTransport>();
  const servers: McpServer[] = [];
  const http = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    log.authorizations.push(req.headers.authorization ?? null);
    if (url.pathname === "/sse" && req.method === "GET") {
      const t = new SSEServerTransport("/messages", res);
      transports.set(t.sessionId, t);
      const server = testMcpServer({ log });
      servers.push(server);
      log.add("sse-open");
      await server.connect(t);
      return;
    }
    const t = url.pathname === "/messages" ? transports.get(url.searchParams.get("sessionId") ?? "") : undefined;
    if (t && req.method === "POST") return void (await t.handlePostMessage(req, res));
    res.writeHead(405).end();
  });
  const base = await listen(http);
  return {
    url: `${base}/sse`,
    log,
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
      await stop(http);
    },
  };
}

/** A loopback server answering every request with `status` (a server that is down). */
export async function startFailingServer(status: number, body = "down"): Promise<{ url: string; requests: IncomingMessage[]; close(): Promise<void> }> {
  const requests: IncomingMessage[] = [];
  const http = createServer((req, res) => {
    requests.push(req);
    res.writeHead(status, { "content-type": "text/plain" }).end(body);
  });
  const base = await listen(http);
  return { url: `${base}/mcp`, requests, close: () => stop(http) };
}

/** A loopback server that takes requests and never answers them. */
export async function startSilentServer(): Promise<{ url: string; log: ServerLog; close(): Promise<void> }> {
  const log = new ServerLog();
  const http = createServer(() => log.add("request"));
  const base = await listen(http);
  return { url: `${base}/mcp`, log, close: () => stop(http) };
}

/** A loopback URL with nothing listening on it (connection refused). */
export async function deadUrl(): Promise<string> {
  const http = createServer();
  const base = await listen(http);
  await stop(http);
  return `${base}/mcp`;
}
