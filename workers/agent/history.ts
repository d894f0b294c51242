import { OFFLINE_MODEL_ID } from "./offline.ts";
import { repairTranscript } from "./repair.ts";
import type { ChatMessage } from "./types.ts";

// Every offline reply starts with this (offline.ts), so replies stored before messages
// carried `model` are still recognised.
const OFFLINE_PREFIX = "(offline model)";

/**
 * Whether an assistant message was written by the built-in offline model: marked with
 * `model: "offline"`, or, for messages stored before the mark existed (no `model`), by
 * the notice every offline reply opens with.
 */
export function isOfflineReply(m: ChatMessage): boolean {
  if (m.role !== "assistant") return false;
  if (m.model !== undefined) return m.model === OFFLINE_MODEL_ID;
  return typeof m.content === "string" && m.content.startsWith(OFFLINE_PREFIX) && !m.tool_calls;
}

/**
 * The history as the model `modelId` may see it. A real model never sees the offline
 * model's canned replies: they are dropped, and the user messages they answered are kept
 * (the repair merges a run of user messages into one), so nothing the user said is lost
 * and the transcript stays valid. The offline model sees everything. The result is repaired.
 */
export function forProvider(history: readonly ChatMessage[], modelId: string): ChatMessage[] {
  if (modelId === OFFLINE_MODEL_ID) return repairTranscript(history);
  return repairTranscript(history.filter((m) => !isOfflineReply(m)));
}
