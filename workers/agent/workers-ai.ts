import { ProviderError } from "./errors.ts";
import { abortableSleep, type ChatModel, type ModelRequest, type ModelResult } from "./model.ts";
import { chunkUsage, deltaText, readChunkStream } from "./sse.ts";
import { idleAttempt, withRetries } from "./streamed-call.ts";
import type { ChatMessage, FinishReason, ToolCall, Usage } from "./types.ts";
import { errorMessage } from "../log/index.ts";

/**
 * The part of the Workers AI binding (`env.AI`, `[ai] binding = "AI"`) this uses. With
 * `stream: true`, `run` resolves to a stream of server-sent events `data: {"response": …}`
 * ending `data: [DONE]`; without, to one object.
 */
export interface AiBinding {
  run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
}

/** Model used when `LLM_PROVIDER=workers-ai` and `LLM_MODEL` is unset (it supports tool calls). */
export const DEFAULT_WORKERS_AI_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

/** Settings of {@link WorkersAiModel}. */
export interface WorkersAiOptions {
  ai: AiBinding;
  model: string;
  /** Longest silence allowed before the stream starts or between two chunks. */
  idleTimeoutMs?: number;
  /** Retries when Workers AI is out of capacity, before any text was streamed. */
  maxRetries?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

interface Slot {
  id: string;
  name: string;
  arguments: string;
}

/** Reads both chunk shapes Workers AI streams: its own (`response`, `tool_calls`) and OpenAI's (`choices[0].delta`). */
class Accumulator {
  content = "";
  slots: Slot[] = [];
  finish: string | null = null;
  usage: Usage | undefined;
  done = false;

  /** Applies one chunk; returns the text it added. */
  apply(chunk: unknown): string {
    if (typeof chunk !== "object" || chunk === null) return "";
    const c = chunk as Record<string, unknown>;
    this.usage = chunkUsage(c) ?? this.usage;
    if (c.error !== undefined && c.error !== null) {
      const e = workersAiError(typeof c.error === "string" ? c.error : JSON.stringify(c.error));
      e.usage = this.usage;
      throw e;
    }
    let text = "";
    if (typeof c.response === "string") text += c.response;
    else if (c.response !== undefined && c.response !== null) text += JSON.stringify(c.response);
    if (Array.isArray(c.tool_calls)) this.#calls(c.tool_calls);
    const choice = (Array.isArray(c.choices) ? c.choices[0] : undefined) as
      | { delta?: Record<string, unknown>; message?: Record<string, unknown>; finish_reason?: string | null }
      | undefined;
    const delta = choice?.delta ?? choice?.message;
    if (delta) {
      text += deltaText(delta.content);
      if (Array.isArray(delta.tool_calls)) this.#calls(delta.tool_calls);
    }
    const finish = choice?.finish_reason ?? c.finish_reason;
    if (typeof finish === "string") this.finish = finish;
    this.content += text;
    return text;
  }

  /**
   * Tool calls come complete (`{name, arguments: {…}}`, in the last chunk) or in OpenAI's
   * pieces (`{index, id, function: {name, arguments: "…"}}`); an all-null piece ends a call.
   */
  #calls(list: unknown[]): void {
    for (const raw of list) {
      if (typeof raw !== "object" || raw === null) continue;
      const tc = raw as { id?: unknown; index?: unknown; name?: unknown; arguments?: unknown; function?: { name?: unknown; arguments?: unknown } };
      const name = typeof tc.function?.name === "string" ? tc.function.name : typeof tc.name === "string" ? tc.name : "";
      const rawArgs = tc.function ? tc.function.arguments : tc.arguments;
      const args = typeof rawArgs === "string" ? rawArgs : rawArgs === undefined || rawArgs === null ? "" : JSON.stringify(rawArgs);
      const id = typeof tc.id === "string" ? tc.id : "";
      if (!id && !name && !args) continue;
      if (!tc.function) {
        // A complete call; skip it if the pieces already built the same one.
        if (!this.slots.some((s) => s.name === name && s.arguments === args)) this.slots.push({ id, name, arguments: args });
        continue;
      }
      const index = typeof tc.index === "number" ? tc.index : id ? this.slots.findIndex((s) => s.id === id) : -1;
      const at = index >= 0 ? index : this.slots.length;
      const slot = (this.slots[at] ??= { id: "", name: "", arguments: "" });
      if (id) slot.id = id;
      if (name && !slot.name) slot.name = name;
      slot.arguments += args;
    }
  }

  result(): ModelResult {
    const toolCalls: ToolCall[] = this.slots
      .filter((s) => s && s.name)
      .map((s, i) => ({ id: s.id || `call_${i}`, type: "function", function: { name: s.name, arguments: s.arguments || "{}" } }));
    const finishReason: FinishReason = toolCalls.length > 0 ? "tool_calls" : this.finish === "length" ? "length" : "stop";
    return { content: this.content, toolCalls, finishReason, ...(this.usage ? { usage: this.usage } : {}) };
  }
}

/** Workers AI error codes (the `NNNN:` that starts the binding's error message) and what they mean here. */
const CODES: Record<string, { code: ProviderError["code"]; text: string }> = {
  "5007": { code: "provider_rejected", text: "Workers AI has no such model; check LLM_MODEL" },
  "3042": { code: "provider_rejected", text: "Workers AI says the model name is invalid; check LLM_MODEL" },
  "5006": { code: "provider_rejected", text: "Workers AI rejected the request" },
  "3006": { code: "provider_rejected", text: "the request is too large for Workers AI" },
  "5016": { code: "provider_rejected", text: "the Cloudflare account has not agreed to this model's terms" },
  "5018": { code: "provider_rejected", text: "the Cloudflare account may not use this model" },
  "3041": { code: "provider_rejected", text: "the Cloudflare account may not use this model" },
  "3023": { code: "provider_auth", text: "Workers AI is not available to this Cloudflare account" },
  "3036": { code: "provider_rate_limited", text: "the Cloudflare account has used up its daily Workers AI allocation" },
  "3040": { code: "provider_rate_limited", text: "Workers AI is out of capacity right now" },
  "3007": { code: "provider_timeout", text: "Workers AI timed out" },
};

/** Errors that retrying cannot fix even though their code is retryable (a daily quota). */
const FINAL = new WeakSet<ProviderError>();

/** Maps an error of the binding (or one sent inside the stream) to a {@link ProviderError}. */
export function workersAiError(err: unknown): ProviderError {
  const message = errorMessage(err).replace(/\s+/g, " ").trim();
  const code = /\b(\d{4}):/.exec(message)?.[1];
  const known = code ? CODES[code] : undefined;
  const detail = message.slice(0, 300);
  const e = known
    ? new ProviderError(known.code, `${known.text} (${detail})`)
    : new ProviderError("provider_unavailable", `Workers AI failed (${detail || "no detail"})`);
  if (code === "3036") FINAL.add(e);
  return e;
}

/** The request rejected the `tools` field: this model does not take tools. */
function refusedTools(err: ProviderError, sentTools: boolean): boolean {
  return sentTools && err.code === "provider_rejected" && /\b(5006|tool)/i.test(err.message);
}

function toWire(m: ChatMessage): Record<string, unknown> {
  // Text models here take no image parts: the model is told, so it does not claim to see them.
  const unseen = m.role === "user" && (m.attached?.images.length ?? 0) > 0 ? "\n\n(The images attached above are not shown to this model.)" : "";
  const out: Record<string, unknown> = { role: m.role, content: `${m.content ?? ""}${unseen}` };
  if (m.tool_calls) out.tool_calls = m.tool_calls;
  if (m.role === "tool") {
    out.tool_call_id = m.tool_call_id ?? "";
    if (m.name) out.name = m.name;
  }
  return out;
}

/** A Workers AI text-generation model through the `AI` binding, streamed, with tool calls. */
export class WorkersAiModel implements ChatModel {
  readonly id: string;
  readonly #o: Required<WorkersAiOptions>;
  /** Set once the model refused a request with tools: later requests go without. */
  #noTools = false;

  constructor(opts: WorkersAiOptions) {
    this.id = opts.model;
    this.#o = { idleTimeoutMs: 60_000, maxRetries: 2, sleep: abortableSleep, ...opts };
  }

  complete(req: ModelRequest): Promise<ModelResult> {
    return withRetries(
      req,
      this.#o,
      () => this.#toolsOrNot(req),
      (err) => FINAL.has(err),
    );
  }

  /** One attempt; a model that refuses the tools is asked again at once without them (and from now on). */
  async #toolsOrNot(req: ModelRequest): Promise<ModelResult> {
    const withTools = !this.#noTools && (req.tools?.length ?? 0) > 0;
    try {
      return await this.#attempt(req, withTools);
    } catch (err) {
      if (!(err instanceof ProviderError) || err.partial || !refusedTools(err, withTools)) throw err;
      this.#noTools = true;
      return this.#attempt(req, false);
    }
  }

  #attempt(req: ModelRequest, withTools: boolean): Promise<ModelResult> {
    const acc = new Accumulator();
    const inputs = { messages: req.messages.map(toWire), stream: true, ...(withTools ? { tools: req.tools } : {}) };
    return idleAttempt(req, { idleTimeoutMs: this.#o.idleTimeoutMs, who: "Workers AI" }, acc, async ({ signal, arm }) => {
      let out: unknown;
      try {
        out = await this.#o.ai.run(this.#o.model, inputs, { signal });
      } catch (err) {
        throw workersAiError(err);
      }
      if (out instanceof ReadableStream) {
        const malformed = "Workers AI sent a malformed stream chunk";
        await readChunkStream(out as ReadableStream<Uint8Array>, acc, { signal, arm, onText: req.onText, malformed, mapError: workersAiError });
        if (!acc.done && acc.finish === null) throw new ProviderError("provider_bad_stream", "the Workers AI stream ended before the reply was complete");
      } else {
        // Some models answer with one object even when asked to stream.
        const text = acc.apply(out);
        if (text) await req.onText?.(text);
      }
    });
  }
}
