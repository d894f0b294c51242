import { parseRetryAfter } from "../retry/index.ts";
import { ProviderError, errorForStatus } from "./errors.ts";
import { abortableSleep, type ChatModel, type ModelRequest, type ModelResult } from "./model.ts";
import { chunkUsage, deltaText, readChunkStream } from "./sse.ts";
import { idleAttempt, withRetries } from "./streamed-call.ts";
import type { ChatMessage, FinishReason, ImagePart, ToolCall, Usage } from "./types.ts";
import { errorMessage } from "../log/index.ts";

/** Settings of an OpenAI-compatible provider (`POST {baseUrl}/chat/completions`). */
export interface OpenAiOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  fetch?: typeof fetch;
  /** Longest silence allowed before the headers or between two chunks. */
  idleTimeoutMs?: number;
  /** Retries of 429/5xx/unreachable before any text was streamed. */
  maxRetries?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

interface WireMessage {
  role: string;
  content: string | null | Array<{ type: "text"; text: string } | ImagePart>;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

function toWire(m: ChatMessage): WireMessage {
  // Images that came with a user message go as content parts after its text.
  const images = m.role === "user" ? (m.attached?.images ?? []) : [];
  const text = m.content ?? (m.tool_calls ? null : "");
  const out: WireMessage = { role: m.role, content: images.length > 0 ? [{ type: "text", text: text ?? "" }, ...images] : text };
  if (m.tool_calls) out.tool_calls = m.tool_calls;
  if (m.role === "tool") out.tool_call_id = m.tool_call_id ?? "";
  return out;
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/** Accumulates one streamed completion. */
class Accumulator {
  content = "";
  calls: PartialCall[] = [];
  finish: string | null = null;
  usage: Usage | undefined;
  done = false;

  /** Applies one decoded chunk; returns the text delta it carried. */
  apply(chunk: unknown): string {
    const obj = (typeof chunk === "object" && chunk !== null ? chunk : {}) as ChunkShape;
    // Usage first, from whichever chunk carries it (OpenAI's last has `choices: []`, an error chunk may too).
    this.usage = chunkUsage(obj) ?? this.usage;
    if (obj.error) {
      const msg = typeof obj.error.message === "string" ? obj.error.message : JSON.stringify(obj.error);
      const e = new ProviderError("provider_rejected", `the model provider reported an error: ${msg}`);
      e.usage = this.usage;
      throw e;
    }
    const choice = Array.isArray(obj.choices) ? obj.choices[0] : undefined;
    if (!choice) return "";
    const delta = choice.delta ?? choice.message ?? {};
    const text = deltaText(delta.content);
    for (const tc of delta.tool_calls ?? []) {
      const index = tc.index ?? this.calls.length;
      const slot = (this.calls[index] ??= { id: "", name: "", arguments: "" });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name += tc.function.name;
      if (tc.function?.arguments) slot.arguments += tc.function.arguments;
    }
    if (choice.finish_reason) this.finish = choice.finish_reason;
    this.content += text;
    return text;
  }

  result(): ModelResult {
    const toolCalls: ToolCall[] = this.calls
      .filter((c) => c && c.name)
      .map((c, i) => ({ id: c.id || `call_${i}`, type: "function", function: { name: c.name, arguments: c.arguments || "{}" } }));
    const out: ModelResult = { content: this.content, toolCalls, finishReason: mapFinish(this.finish, toolCalls.length > 0) };
    if (this.usage) out.usage = this.usage;
    return out;
  }
}

interface ChunkShape {
  error?: { message?: unknown };
  choices?: Array<{
    delta?: DeltaShape;
    message?: DeltaShape;
    finish_reason?: string | null;
  }>;
}
interface DeltaShape {
  /** A string, or typed parts (`[{type: "text", text}, {type: "thinking", …}]`). */
  content?: unknown;
  tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

function mapFinish(reason: string | null, hasCalls: boolean): FinishReason {
  if (hasCalls) return "tool_calls";
  switch (reason) {
    case "length":
      return "length";
    case "content_filter":
      return "content_filter";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    default:
      return "stop";
  }
}

async function errorDetail(res: Response): Promise<string> {
  const text = (await res.text().catch(() => "")).slice(0, 2000);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    const msg = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (msg) return String(msg).slice(0, 300);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim().slice(0, 300);
}

/** Joins a base URL and a path with exactly one slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/** The OpenAI-compatible streaming chat client. Errors are {@link ProviderError}s. */
export class OpenAiModel implements ChatModel {
  readonly id: string;
  readonly #opts: Required<Omit<OpenAiOptions, "apiKey">> & { apiKey?: string };

  constructor(opts: OpenAiOptions) {
    this.id = opts.model;
    this.#opts = {
      fetch: (input, init) => fetch(input, init),
      idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
      maxRetries: 2,
      sleep: abortableSleep,
      ...opts,
    };
  }

  async complete(req: ModelRequest): Promise<ModelResult> {
    const body = JSON.stringify({
      model: this.#opts.model,
      messages: req.messages.map(toWire),
      stream: true,
      stream_options: { include_usage: true },
      ...(req.tools && req.tools.length > 0 ? { tools: req.tools, tool_choice: "auto" } : {}),
    });
    return withRetries(req, this.#opts, () => this.#attempt(body, req));
  }

  #attempt(body: string, req: ModelRequest): Promise<ModelResult> {
    const acc = new Accumulator();
    return idleAttempt(req, { idleTimeoutMs: this.#opts.idleTimeoutMs, who: "the model provider" }, acc, async ({ signal, arm }) => {
      let res: Response;
      try {
        const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
        if (this.#opts.apiKey) headers.authorization = `Bearer ${this.#opts.apiKey}`;
        res = await this.#opts.fetch(joinUrl(this.#opts.baseUrl, "chat/completions"), { method: "POST", headers, body, signal });
      } catch (err) {
        const why = errorMessage(err);
        throw new ProviderError("provider_unreachable", `cannot reach the model provider at ${this.#opts.baseUrl} (${why})`);
      }
      if (!res.ok) {
        const detail = await errorDetail(res);
        throw errorForStatus(res.status, detail, parseRetryAfter(res.headers.get("retry-after"), Date.now()));
      }
      const type = res.headers.get("content-type") ?? "";
      if (type.includes("application/json")) {
        // Some servers ignore `stream: true` and answer with one JSON completion.
        const parsed = await res.json().catch(() => {
          throw new ProviderError("provider_bad_stream", "the model provider sent malformed JSON");
        });
        const text = acc.apply(parsed);
        if (text) await req.onText?.(text);
        return;
      }
      if (!res.body) throw new ProviderError("provider_bad_stream", "the model provider sent an empty response");
      await readChunkStream(res.body, acc, { signal, arm, onText: req.onText, malformed: "the model provider sent a malformed stream chunk" });
      if (!acc.done && acc.finish === null) throw new ProviderError("provider_bad_stream", "the model provider's stream ended before the reply was complete");
    });
  }
}
