import type { ChatMessage, FinishReason, ToolCall, ToolSchema, Usage } from "./types.ts";

/** One model call. `onText` receives each piece of reply text as it streams. */
export interface ModelRequest {
  messages: ChatMessage[];
  tools?: ToolSchema[];
  signal?: AbortSignal;
  /**
   * May return a promise: the stream is read on once it settles. An API caller's sink asks
   * for one task after the first words, so they go out before the rest of a reply that came
   * in one read is parsed and the turn ends (bench:turn: 4-5 ms off the first token).
   */
  onText?: (text: string) => void | Promise<void>;
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

// The abortable sleep model clients wait with lives in the retry module; the agent's API keeps its name.
export { abortableSleep } from "../retry/index.ts";
