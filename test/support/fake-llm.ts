/**
 * A fake OpenAI-compatible provider written against web Request/Response, so the same fake
 * serves workerd tests (through the fetch stub) and Node end-to-end tests (on loopback).
 * Each call takes the next scripted reply, or echoes the last user message.
 */

export interface ToolCallScript {
  id: string;
  name: string;
  arguments: string;
}

export type Reply =
  | { kind: "text"; chunks: string[]; finish?: string; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { kind: "tools"; calls: readonly ToolCallScript[]; text?: string }
  | { kind: "http"; status: number; body: string; headers?: Record<string, string> }
  /** Sends the first chunks, then holds the stream open until released or cancelled (or `limitMs` passed). */
  | { kind: "hold"; first: string[]; rest: string[]; gate: Gate; limitMs?: number }
  /** A 200 response whose stream is not valid SSE JSON. */
  | { kind: "garbage" };

/**
 * Lets a test decide when a held stream goes on. Plain flags, not promises: in workerd a
 * promise resolved inside a Durable Object moves the awaiting test into that object's I/O
 * context, so tests observe progress through the turn's own stream instead.
 */
export class Gate {
  started = false;
  released = false;
  cancelled = false;

  release(): void {
    this.released = true;
  }

  /**
   * The object reading the stream was aborted (abortAllDurableObjects): the hold stops
   * without writing again, instead of polling every 2 ms until its time limit and then
   * erroring into a stream nobody reads.
   */
  abandon(): void {
    this.cancelled = true;
  }
}

/** How long a held stream waits for a release before it gives up (a test forgot to). */
const HOLD_LIMIT_MS = 10_000;

/** A content part of a user message (its text, or an image sent with it). */
export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export interface RecordedCall {
  body: {
    model: string;
    messages: Array<{ role: string; content: string | null | ContentPart[]; tool_calls?: unknown[]; tool_call_id?: string }>;
    tools?: unknown[];
    stream?: boolean;
  };
  authorization: string | null;
}

const encoder = new TextEncoder();

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/** A request's conversation: its messages after the leading system message (the instructions). */
export function conversation(body: RecordedCall["body"]): RecordedCall["body"]["messages"] {
  return body.messages[0]?.role === "system" ? body.messages.slice(1) : body.messages;
}

/** A message's text, whether its content is a string or parts. */
export function textOf(content: RecordedCall["body"]["messages"][number]["content"]): string {
  if (Array.isArray(content)) return content.map((p) => (p.type === "text" ? p.text : "")).join("");
  return String(content ?? "");
}

/** The images a message carried as content parts (their data URLs). */
export function imagesOf(content: RecordedCall["body"]["messages"][number]["content"]): string[] {
  return Array.isArray(content) ? content.flatMap((p) => (p.type === "image_url" ? [p.image_url.url] : [])) : [];
}

export function lastUserText(body: RecordedCall["body"]): string {
  const users = body.messages.filter((m) => m.role === "user");
  return textOf(users[users.length - 1]?.content ?? null);
}

/** One call of `POST …/audio/transcriptions`. */
export interface RecordedTranscription {
  model: string;
  fileName: string;
  type: string;
  bytes: number;
  authorization: string | null;
}

export class FakeLlm {
  readonly calls: RecordedCall[] = [];
  /** What `GET /models` lists (null: the route does not exist). */
  models: string[] | null = null;
  /** The key `GET /models` accepts. */
  key = "test-llm-key";
  readonly transcriptions: RecordedTranscription[] = [];
  /** What `/audio/transcriptions` answers (a status makes it fail). */
  transcript: string | { status: number } = "hello from a voice note";
  readonly #script: Reply[] = [];

  /** Queues replies for the next calls, in order. */
  then(...replies: Reply[]): this {
    this.#script.push(...replies);
    return this;
  }

  text(...chunks: string[]): this {
    return this.then({ kind: "text", chunks });
  }

  /**
   * Queues a held reply and returns its gate. `limitMs` (default 10 s) bounds the hold: a
   * benchmark that kills the Worker mid-stream holds longer than a test does.
   */
  hold(first: string[] = ["partial "], rest: string[] = ["rest"], limitMs?: number): Gate {
    const gate = new Gate();
    this.then({ kind: "hold", first, rest, gate, ...(limitMs !== undefined ? { limitMs } : {}) });
    return gate;
  }

  reset(): void {
    this.calls.length = 0;
    this.transcriptions.length = 0;
    this.transcript = "hello from a voice note";
    this.#script.length = 0;
    this.models = null;
  }

  /** Handles `POST …/audio/transcriptions` (multipart `file`, `model`), OpenAI-style. */
  async #transcribe(req: Request): Promise<Response> {
    const form = await req.formData();
    const file = form.get("file");
    if (!(file instanceof Blob)) return Response.json({ error: { message: "file is required" } }, { status: 400 });
    this.transcriptions.push({
      model: String(form.get("model")),
      fileName: file instanceof File ? file.name : "",
      type: file.type,
      bytes: file.size,
      authorization: req.headers.get("authorization"),
    });
    if (typeof this.transcript !== "string") return Response.json({ error: { message: "no" } }, { status: this.transcript.status });
    return Response.json({ text: this.transcript });
  }

  /** Handles `POST …/chat/completions`, `POST …/audio/transcriptions`, and `GET …/models` (the models in `models`; 404 when null). */
  async handle(req: Request): Promise<Response> {
    if (req.method === "POST" && new URL(req.url).pathname.endsWith("/audio/transcriptions")) return this.#transcribe(req);
    if (req.method === "GET" && new URL(req.url).pathname.endsWith("/models")) {
      if (req.headers.get("authorization") !== `Bearer ${this.key}`)
        return Response.json({ error: { message: "Incorrect API key provided" } }, { status: 401 });
      return this.models
        ? Response.json({ object: "list", data: this.models.map((id) => ({ id, object: "model" })) })
        : new Response("not found", { status: 404 });
    }
    if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/chat/completions")) {
      return new Response("not found", { status: 404 });
    }
    const body = (await req.json()) as RecordedCall["body"];
    this.calls.push({ body, authorization: req.headers.get("authorization") });
    const reply = this.#script.shift() ?? { kind: "text", chunks: echoChunks(lastUserText(body)) };
    return respond(reply);
  }
}

/** The default reply: "echo: <text>" in a few chunks. */
export function echoChunks(text: string): string[] {
  const words = `echo: ${text}`.match(/\S+\s*/g) ?? ["echo:"];
  return words;
}

const SSE_HEADERS = { "content-type": "text/event-stream" };

function respond(reply: Reply): Response {
  switch (reply.kind) {
    case "http":
      return new Response(reply.body, { status: reply.status, headers: reply.headers ?? { "content-type": "application/json" } });
    case "garbage":
      return new Response("data: {not json\n\n", { headers: SSE_HEADERS });
    case "text": {
      const parts = reply.chunks.map((c) => chunk({ content: c }));
      parts.push(chunk({}, reply.finish ?? "stop"));
      if (reply.usage) parts.push(`data: ${JSON.stringify({ choices: [], usage: reply.usage })}\n\n`);
      parts.push("data: [DONE]\n\n");
      return new Response(parts.join(""), { headers: SSE_HEADERS });
    }
    case "tools": {
      const parts: string[] = [];
      if (reply.text) parts.push(chunk({ content: reply.text }));
      reply.calls.forEach((c, index) => {
        parts.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
        parts.push(chunk({ tool_calls: [{ index, function: { arguments: c.arguments } }] }));
      });
      parts.push(chunk({}, "tool_calls"), "data: [DONE]\n\n");
      return new Response(parts.join(""), { headers: SSE_HEADERS });
    }
    case "hold": {
      const { gate } = reply;
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          for (const c of reply.first) controller.enqueue(encoder.encode(chunk({ content: c })));
          gate.started = true;
          const until = Date.now() + (reply.limitMs ?? HOLD_LIMIT_MS);
          while (!gate.released && !gate.cancelled) {
            if (Date.now() > until) {
              controller.error(new Error("held stream was never released"));
              return;
            }
            await new Promise((r) => setTimeout(r, 2));
          }
          if (gate.cancelled) return;
          for (const c of reply.rest) controller.enqueue(encoder.encode(chunk({ content: c })));
          controller.enqueue(encoder.encode(chunk({}, "stop") + "data: [DONE]\n\n"));
          controller.close();
        },
        cancel() {
          gate.cancelled = true;
        },
      });
      return new Response(stream, { headers: SSE_HEADERS });
    }
  }
}
