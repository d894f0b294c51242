import type { ChatMessage, FinishReason, ToolCall, ToolSchema, Usage } from "./types.ts";

/** One model call. `onText` receives each piece of reply text as it streams. */
export interface ModelRequest {
  messages: ChatMessage[];
  tools?: ToolSchema[];
  signal?: AbortSignal;
  onText?: (text: string) => void;
}

/**
 * What a model call produced. An aborted call resolves (it does not throw) with
 * `finishReason: "interrupted"` and the text streamed until then.
 */
export interface ModelResult {
  content: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage?: Usage;
}

/** A chat model: the OpenAI-compatible client or the offline model. */
export interface ChatModel {
  /** Model name as stored on sessions ("offline" for the built-in one). */
  readonly id: string;
  complete(req: ModelRequest): Promise<ModelResult>;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
