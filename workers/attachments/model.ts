import type { ChatModel, ModelRequest } from "../agent/index.ts";
import type { ChatMessage } from "../agent/types.ts";
import { describe } from "./kinds.ts";
import type { TurnAttachments } from "./types.ts";

/**
 * The turn's model, shown what came with its message: every request of the turn (tool
 * rounds too) carries the images and the file list on its last user message, which is
 * this turn's (however instructions, summaries and repairs shaped the request before).
 */
export function withAttachments(model: ChatModel, got: TurnAttachments): ChatModel {
  if (got.records.length === 0) return model;
  const files = got.records.map(({ kind, name, mime, size, seconds, status, note }) => ({
    kind,
    name,
    mime,
    size,
    status,
    note,
    label: describe({ kind, name, mime, size, seconds }),
  }));
  const attached = { images: got.images, files };
  return {
    id: model.id,
    complete(req: ModelRequest) {
      const at = req.messages.findLastIndex((m) => m.role === "user");
      if (at < 0) return model.complete(req);
      const messages: ChatMessage[] = req.messages.map((m, i) => (i === at ? { ...m, attached } : m));
      return model.complete({ ...req, messages });
    },
  };
}
