import { serve, type LoopbackServer } from "./http.ts";

/**
 * A stand-in for the Worker's HTTP API on loopback, for driving the CLI in-process: the
 * routes the chat and login use, with turns whose streams the test writes and ends.
 */
export interface HeldTurn {
  sessionId: string;
  content: string;
  /** Sends one SSE event. */
  event(name: string, data: unknown): void;
  /** `delta` events, then `done`, then the end of the stream. */
  reply(...texts: string[]): void;
}

interface Waiter<T> {
  resolve: (v: T) => void;
}

export class FakeWorker {
  readonly token: string;
  /** Requests seen, as `METHOD /path`, with the Authorization header they carried. */
  readonly requests: Array<{ line: string; auth: string | null }> = [];
  /** Sessions whose `running` is true; POST …/turns to them answers 409 turn_in_progress. */
  readonly busy = new Set<string>();
  /** What GET /v1/platforms answers. */
  platforms: unknown[] = [];
  /** A session's handoff (GET answers it as the Worker would; none: null). */
  readonly handoffs = new Map<string, unknown>();
  /** A session's last activity (epoch ms; none: 0). */
  readonly lastActive = new Map<string, number>();
  /** Messages of a session, for --resume. */
  readonly transcripts = new Map<string, Array<{ role: string; content: string }>>();
  #server: LoopbackServer | null = null;
  #turns: HeldTurn[] = [];
  #turnWaiters: Array<Waiter<HeldTurn>> = [];
  #requestWaiters: Array<{ match: string; n: number; resolve: () => void }> = [];
  #nextId = 1;

  constructor(token = "good-token") {
    this.token = token;
  }

  get url(): string {
    return this.#server!.url;
  }

  async start(): Promise<this> {
    this.#server = await serve((req) => this.#handle(req));
    return this;
  }

  close(): Promise<void> {
    return this.#server!.close();
  }

  /** The next turn the CLI starts (or one already started and not yet taken). */
  nextTurn(): Promise<HeldTurn> {
    const t = this.#turns.shift();
    if (t) return Promise.resolve(t);
    return new Promise((resolve) => this.#turnWaiters.push({ resolve }));
  }

  /** How many requests `METHOD /path?query` equal to `line` have arrived. */
  count(line: string): number {
    return this.requests.filter((r) => r.line === line).length;
  }

  /** Resolves once `n` requests equal to `line` have arrived. */
  seen(line: string, n = 1): Promise<void> {
    if (this.count(line) >= n) return Promise.resolve();
    return new Promise((resolve) => this.#requestWaiters.push({ match: line, n, resolve }));
  }

  #session(id: string) {
    return {
      id,
      title: null,
      source: "cli",
      running: this.busy.has(id),
      handoff: this.handoffs.get(id) ?? null,
      model: "fake",
      session_key: null,
      started_at: 0,
      last_active_at: this.lastActive.get(id) ?? 0,
      message_count: this.transcripts.get(id)?.length ?? 0,
      ended_at: null,
      end_reason: null,
    };
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const line = `${req.method} ${url.pathname}${url.search}`;
    this.requests.push({ line, auth: req.headers.get("authorization") });
    for (const w of this.#requestWaiters.filter((w) => this.count(w.match) >= w.n)) {
      this.#requestWaiters.splice(this.#requestWaiters.indexOf(w), 1);
      w.resolve();
    }
    if (url.pathname === "/health") return Response.json({ ok: true, service: "hermes-edge", version: "9.9.9" });
    if (req.headers.get("authorization") !== `Bearer ${this.token}`)
      return Response.json({ error: { code: "unauthorized", message: "bad token" } }, { status: 401 });
    if (url.pathname === "/v1/platforms") return Response.json({ platforms: this.platforms });
    if (url.pathname === "/v1/links" && req.method === "POST") {
      const { code } = (await req.json()) as { code: string };
      if (code !== "ABCD-EFGH") return Response.json({ error: { code: "wrong_code", message: "That code is wrong, used or expired." } }, { status: 400 });
      const accounts = [
        { platform: "telegram", user_id: "1001" },
        { platform: "cli", user_id: "operator" },
      ];
      return Response.json({ person: { id: "person_1", accounts }, message: "Linked." });
    }
    const m = /^\/v1\/sessions(?:\/([^/]+))?(?:\/(turns|messages|interrupt))?$/.exec(url.pathname);
    if (!m) return Response.json({ error: { code: "not_found", message: "no route" } }, { status: 404 });
    const [, id, action] = m;
    if (!id && req.method === "GET") return Response.json({ sessions: [...this.transcripts.keys()].map((k) => this.#session(k)) });
    if (!id && req.method === "POST") {
      const sid = `s${this.#nextId++}`;
      this.transcripts.set(sid, []);
      return Response.json({ session: this.#session(sid) }, { status: 201 });
    }
    if (id && !action)
      return this.transcripts.has(id)
        ? Response.json({ session: this.#session(id) })
        : Response.json({ error: { code: "not_found", message: `session ${id} not found` } }, { status: 404 });
    if (action === "messages")
      return Response.json({
        messages: (this.transcripts.get(id!) ?? []).map((x, i) => ({ id: i, ...x, tool_calls: null, tool_name: null, finish_reason: null, created_at: 0 })),
      });
    if (action === "interrupt") return Response.json({ interrupted: true });
    if (this.busy.has(id!))
      return Response.json({ error: { code: "turn_in_progress", message: "a turn is already running in this session" } }, { status: 409 });
    const { content } = (await req.json()) as { content: string };
    return this.#openTurn(id!, content);
  }

  #openTurn(sessionId: string, content: string): Response {
    const encoder = new TextEncoder();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const turn: HeldTurn = {
      sessionId,
      content,
      event: (name, data) => controller.enqueue(encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)),
      reply: (...texts) => {
        for (const text of texts) turn.event("delta", { text });
        turn.event("done", { finish_reason: "stop" });
        controller.close();
      },
    };
    const waiter = this.#turnWaiters.shift();
    if (waiter) waiter.resolve(turn);
    else this.#turns.push(turn);
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }
}

/** Resolves when `read()` (what a stream has printed so far) contains `text`. */
export function printed(stream: NodeJS.EventEmitter, read: () => string, text: string): Promise<void> {
  if (read().includes(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const check = () => {
      if (!read().includes(text)) return;
      stream.off("data", check);
      resolve();
    };
    stream.on("data", check);
  });
}
