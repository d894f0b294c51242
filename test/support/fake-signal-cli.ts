/**
 * A fake signal-cli HTTP daemon (`signal-cli -a <account> daemon --http`, PLATFORM-NOTES
 * "Signal"; sc `src/main/java/org/asamk/signal/http/HttpServerHandler.java`) as a fetch-style
 * handler: JSON-RPC at `POST /api/v1/rpc` (415 for a body that is not JSON, 201 and no body
 * for a notification, JSON-RPC errors as HTTP 200), server-sent events at
 * `GET /api/v1/events` (`event:receive` and `data:<params>`; no ids), `GET /api/v1/check`.
 * Items delivered while no event stream is open wait here, as they wait on Signal's server
 * for a daemon started with `--receive-mode on-connection`. Runs in Node (served on loopback
 * with test/support/http.ts for a real gateway process) or in-process.
 */

export interface RpcCall {
  method: string;
  params: Record<string, unknown>;
  id: unknown;
  /** What a successful `send` answered (its timestamp). */
  result?: { timestamp: number };
}

const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };

export class FakeSignalCli {
  readonly account: string;
  readonly uuid: string;
  readonly calls: RpcCall[] = [];
  /** Items waiting for an event stream (signal-cli's receive is off while none is connected). */
  readonly queued: unknown[] = [];
  /** Attachment ids → bytes, for `getAttachment`. */
  readonly attachments = new Map<string, Uint8Array>();
  /** While true, `/api/v1/check` fails and the event stream is refused (the daemon is down). */
  down = false;
  #streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  #failures: Array<{ method: string; error: { code: number; message: string } }> = [];
  #ts = 1_765_100_000_000;
  #waiters: Array<() => void> = [];
  #encoder = new TextEncoder();

  constructor(account = "+15550009999", uuid = "0b7e3f31-6a44-4c4e-9a52-8d1f7f2a9b10") {
    this.account = account;
    this.uuid = uuid;
  }

  reset(): void {
    this.calls.length = 0;
    this.queued.length = 0;
    this.attachments.clear();
    this.#failures = [];
    this.down = false;
  }

  /** The next call of `method` answers this JSON-RPC error (as signal-cli does, with HTTP 200). */
  failNext(method: string, code: number, message: string): void {
    this.#failures.push({ method, error: { code, message } });
  }

  /** Open event streams. */
  get streams(): number {
    return this.#streams.size;
  }

  /** A received item (the params object) goes to every open stream, or waits for one. */
  deliver(params: unknown): void {
    if (this.#streams.size === 0) {
      this.queued.push(params);
      return;
    }
    for (const c of this.#streams) this.#write(c, params);
  }

  /** Ends every open stream (a restart of the daemon, a dropped connection). */
  dropStreams(): void {
    for (const c of this.#streams) {
      try {
        c.close();
      } catch {
        // already closed
      }
    }
    this.#streams.clear();
    this.#wake();
  }

  /** The `send` calls, in order. */
  sends(): RpcCall[] {
    return this.calls.filter((c) => c.method === "send");
  }

  /** Resolves once `pred` holds (checked after every call and stream change). */
  async waitFor(pred: () => boolean): Promise<void> {
    while (!pred()) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  #write(c: ReadableStreamDefaultController<Uint8Array>, params: unknown): void {
    c.enqueue(this.#encoder.encode(`event:receive\ndata:${JSON.stringify(params)}\n\n`));
  }

  async handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (path === "/api/v1/check" && req.method === "GET") return new Response(null, { status: this.down ? 503 : 200 });
    if (path === "/api/v1/events" && req.method === "GET") return this.#events(req);
    if (path === "/api/v1/rpc" && req.method === "POST") return this.#rpc(req);
    return new Response("not found", { status: 404 });
  }

  #events(req: Request): Response {
    if (this.down) return new Response("unavailable", { status: 503 });
    let ctrl: ReadableStreamDefaultController<Uint8Array> | null = null;
    const stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        ctrl = c;
        this.#streams.add(c);
        // A keep-alive comment first, as the daemon flushes its headers at once.
        c.enqueue(this.#encoder.encode(":\n\n"));
        for (const item of this.queued.splice(0)) this.#write(c, item);
        this.#wake();
      },
      cancel: () => {
        if (ctrl) this.#streams.delete(ctrl);
        this.#wake();
      },
    });
    // The client went away: in process the body is not tied to its signal, so end it here.
    req.signal.addEventListener("abort", () => {
      if (ctrl) this.#streams.delete(ctrl);
      try {
        ctrl?.error(new DOMException("the client aborted", "AbortError"));
      } catch {
        // already closed
      }
      this.#wake();
    });
    return new Response(stream, { headers: SSE_HEADERS });
  }

  async #rpc(req: Request): Promise<Response> {
    if (!(req.headers.get("content-type") ?? "").startsWith("application/json")) return new Response(null, { status: 415 });
    const body = (await req.json()) as { method?: string; params?: Record<string, unknown>; id?: unknown };
    const call: RpcCall = { method: String(body.method), params: body.params ?? {}, id: body.id };
    this.calls.push(call);
    this.#wake();
    if (body.id === undefined) return new Response(null, { status: 201 });
    const reply = (v: Record<string, unknown>) => Response.json({ jsonrpc: "2.0", ...v, id: body.id });
    const failure = this.#failures.findIndex((f) => f.method === call.method);
    if (failure >= 0) return reply({ error: this.#failures.splice(failure, 1)[0]!.error });
    if (call.params.account !== this.account) return reply({ error: { code: -32600, message: `Method requires valid account parameter` } });
    switch (call.method) {
      case "send": {
        const to = (call.params.recipient as string[] | undefined) ?? [];
        const results = (to.length > 0 ? to : ["group"]).map((r) => ({ recipientAddress: { uuid: r, number: null }, type: "SUCCESS" }));
        call.result = { timestamp: ++this.#ts };
        return reply({ result: { ...call.result, results } });
      }
      case "sendTyping":
      case "sendReceipt":
        return reply({ result: {} });
      case "getUserStatus":
        return reply({ result: [{ recipient: this.account, number: this.account, uuid: this.uuid, isRegistered: true }] });
      case "getAttachment": {
        const bytes = this.attachments.get(String(call.params.id));
        if (!bytes) return reply({ error: { code: -32603, message: "Failed to read attachment" } });
        return reply({ result: { data: Buffer.from(bytes).toString("base64") } });
      }
      default:
        return reply({ error: { code: -32601, message: "Method not implemented" } });
    }
  }
}
