import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A loopback HTTP server around a fetch-style handler (for fakes in end-to-end tests). */
export interface LoopbackServer {
  url: string;
  close(): Promise<void>;
}

async function toRequest(req: IncomingMessage, base: string, signal: AbortSignal): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") headers.set(k, v);
    else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
  }
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? null : Buffer.concat(chunks);
  return new Request(new URL(req.url ?? "/", base), { method, headers, body, signal });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the client went away
  }
  res.end();
}

export async function serve(handler: (req: Request) => Response | Promise<Response>): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    const ctrl = new AbortController();
    res.on("close", () => ctrl.abort());
    const base = `http://${req.headers.host ?? "127.0.0.1"}`;
    toRequest(req, base, ctrl.signal)
      .then((r) => handler(r))
      .then((response) => send(res, response))
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(String(err));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A free loopback port (bound and released at once). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
