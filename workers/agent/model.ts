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

// The abortable sleep model clients wait with lives in the retry module; the agent's API keeps its name.
export { abortableSleep } from "../retry/index.ts";
