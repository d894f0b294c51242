import { ProviderError } from "./errors.ts";
import type { ChatModel } from "./model.ts";
import { repairTranscript } from "./repair.ts";
import type { ToolRegistry, ToolSet } from "./tools.ts";
import type { ChatMessage, FinishReason, Usage } from "./types.ts";
import { errorMessage } from "../log/index.ts";

/** Progress of a running turn, for streaming to whoever waits on it. */
export type TurnEvent =
  | { type: "text"; text: string }
  /** `summary`: the call in one short line, secrets masked (`fetch_url https://…`). */
  | { type: "tool"; phase: "start" | "end"; name: string; id: string; summary: string };

/** How a turn ended. `error` is set when `finishReason` is "error". */
export interface TurnOutcome {
  finishReason: FinishReason;
  /** Text of the last assistant message of the turn (partial when interrupted). */
  text: string;
  error?: { code: string; message: string };
  usage: Usage;
  toolCalls: number;
}

export interface RunTurnOptions {
  model: ChatModel;
  /** Built-in tools and tool sources; the sources are listed once, before the first model call. */
  tools?: ToolRegistry;
  /** The transcript so far, ending with the new user message. */
  history: readonly ChatMessage[];
  /** Persists one new message of this turn, in order, before the turn goes on. */
  append: (message: ChatMessage, usage?: Usage) => Promise<void>;
  /** May return a promise to pause a streamed reply's reading until it settles (see ModelRequest.onText). */
  onEvent?: (event: TurnEvent) => void | Promise<void>;
  signal?: AbortSignal;
  /** fetch for tools (the model has its own). */
  fetch?: typeof fetch;
  /** Model calls allowed in one turn, tool rounds included. */
  maxSteps?: number;
  /**
   * Builds each model request from the transcript so far, tool rounds of this turn
   * included: instructions, summary and the context budget (`planContext`). Default: the
   * transcript itself. Either way the request is repaired.
   */
  prepare?: (transcript: readonly ChatMessage[]) => ChatMessage[];
  /** Called once, as soon as the first model request is on its way (or failed to start). */
  onSent?: () => void;
}

/**
 * Runs one agent turn: model call, tool calls and their results, until the model answers
 * in text, the turn is interrupted through `signal`, or it fails. Never throws for
 * provider failures; they come back as an outcome with a typed error.
 */
export async function runTurn(opts: RunTurnOptions): Promise<TurnOutcome> {
  const { model, signal } = opts;
  const transcript: ChatMessage[] = [...opts.history];
  const usage: Usage = { input: 0, output: 0 };
  let toolCalls = 0;
  const maxSteps = opts.maxSteps ?? 8;
  const emit = (e: TurnEvent) => opts.onEvent?.(e);
  const push = async (m: ChatMessage, u?: Usage) => {
    transcript.push(m);
    await opts.append(m, u);
  };
  const done = (finishReason: FinishReason, text: string, error?: TurnOutcome["error"]): TurnOutcome =>
    error ? { finishReason, text, error, usage, toolCalls } : { finishReason, text, usage, toolCalls };

  // Listing never fails the turn: a source that is down leaves a note instead of tools.
  const tools: ToolSet | undefined = opts.tools ? await opts.tools.forTurn(signal) : undefined;
  // Notes go to the model after the transcript, for this turn only: they are never stored,
  // so the stored history (and the provider's prompt cache of it) stays as it was.
  const notes: ChatMessage[] = tools && tools.notes.length > 0 ? [{ role: "system", content: tools.notes.join("\n") }] : [];

  for (let step = 0; step < maxSteps; step++) {
    // Interrupted between steps (or before the first): stored like any interrupted reply.
    if (signal?.aborted) {
      await push({ role: "assistant", content: "", finish_reason: "interrupted" });
      return done("interrupted", "");
    }
    let result;
    try {
      const call = model.complete({
        messages: [...repairTranscript(opts.prepare ? opts.prepare(transcript) : transcript), ...notes],
        ...(tools ? { tools: tools.schemas() } : {}),
        ...(signal ? { signal } : {}),
        onText: (text) => emit({ type: "text", text }),
      });
      // A model client sends its request before its first await, so it has left by now.
      if (step === 0) {
        try {
          opts.onSent?.();
        } catch (err) {
          void call.catch(() => undefined);
          throw err;
        }
      }
      result = await call;
    } catch (err) {
      const e = err instanceof ProviderError ? err : null;
      const partial = e?.partial ?? "";
      // Tokens billed before the failure are recorded with what was kept (an empty reply if nothing was).
      const billed = e?.usage;
      if (billed) {
        usage.input += billed.input;
        usage.output += billed.output;
      }
      if (partial || billed) await push({ role: "assistant", content: partial, finish_reason: "error" }, billed);
      const error = e ? { code: e.code, message: e.message } : { code: "internal", message: errorMessage(err) };
      return done("error", partial, error);
    }
    if (result.usage) {
      usage.input += result.usage.input;
      usage.output += result.usage.output;
    }
    if (result.finishReason === "interrupted" || signal?.aborted) {
      await push({ role: "assistant", content: result.content, finish_reason: "interrupted" }, result.usage);
      return done("interrupted", result.content);
    }
    if (result.toolCalls.length === 0 || !tools) {
      await push({ role: "assistant", content: result.content, finish_reason: result.finishReason }, result.usage);
      return done(result.finishReason, result.content);
    }
    await push({ role: "assistant", content: result.content || null, tool_calls: result.toolCalls, finish_reason: "tool_calls" }, result.usage);
    const stopped = async () => {
      // The calls left without results get stub results from the repair; the turn itself
      // ends with an (empty) interrupted reply, as every interrupted turn does.
      await push({ role: "assistant", content: "", finish_reason: "interrupted" });
      return done("interrupted", "");
    };
    for (const call of result.toolCalls) {
      if (signal?.aborted) return stopped();
      toolCalls++;
      const summary = tools.summary(call);
      await emit({ type: "tool", phase: "start", name: call.function.name, id: call.id, summary });
      let output: string;
      try {
        output = await tools.run(call, { fetch: opts.fetch ?? ((i, init) => fetch(i, init)), ...(signal ? { signal } : {}) });
      } catch (err) {
        if (signal?.aborted) return stopped();
        throw err;
      }
      await push({ role: "tool", tool_call_id: call.id, name: call.function.name, content: output });
      await emit({ type: "tool", phase: "end", name: call.function.name, id: call.id, summary });
    }
  }
  const note = `(stopped after ${maxSteps} model calls in one turn)`;
  await push({ role: "assistant", content: note, finish_reason: "length" });
  return done("length", note);
}
