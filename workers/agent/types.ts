/**
 * Neutral chat types shared by the Worker, the Durable Objects and the Node relay gateway.
 * Nothing here imports a runtime or an SDK: the agent core runs on `fetch` alone.
 */

/** Roles the transcript understands. Anything else is dropped by the repair pass. */
export type Role = "system" | "user" | "assistant" | "tool";

/** Why an assistant message ended. `interrupted` marks a reply cut short by /stop or Ctrl-C. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "interrupted" | "error";

/** One tool call requested by the model, in the OpenAI chat-completions shape. */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** An image as providers take it: an OpenAI-style `image_url` content part (a data URL). */
export interface ImagePart {
  type: "image_url";
  image_url: { url: string };
}

/** A file that came with a user message, as the model is told of it (see `attached`). */
export interface AttachedFile {
  kind: "image" | "audio" | "voice" | "video" | "document";
  name: string | null;
  mime: string | null;
  size: number | null;
  /** How it reached the agent: shown, inlined, transcribed, unheard, described, too large, failed. */
  status: string;
  /** How it is named for people: "image photo.jpg (image/jpeg, 88 KB)". */
  label: string;
  /** Its line in the message's text. */
  note: string;
}

/** One transcript message. `finish_reason` is ours and is never sent to a provider. */
export interface ChatMessage {
  role: Role;
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Tool name, on tool results. */
  name?: string;
  finish_reason?: FinishReason | null;
  /**
   * The model that wrote an assistant message (its `ChatModel.id`; "offline" for the
   * built-in one). Ours, never sent to a provider: it keeps offline replies out of a real
   * model's history (`forProvider`).
   */
  model?: string;
  /**
   * What came with this user message, for this request only (never stored: the stored
   * text holds a note per file): images go to providers that take them as content parts;
   * the files let the offline model say what it was sent.
   */
  attached?: { images: ImagePart[]; files: AttachedFile[] };
}

/** A message as it may come back from storage: any role, any optional fields. */
export interface RawMessage {
  role: string;
  content?: string | null;
  tool_calls?: ToolCall[] | null;
  tool_call_id?: string | null;
  name?: string | null;
  finish_reason?: string | null;
  model?: string | null;
}

/** Token usage reported by a provider (or estimated by the offline model). */
export interface Usage {
  input: number;
  output: number;
}

/** JSON schema of one callable tool, as providers expect it. */
export interface ToolSchema {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}
