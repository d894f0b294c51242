import { PlatformApiError, type ReplyTarget, type Shown } from "../../workers/platforms/types.ts";
import { resultIds, type Descriptor, type OutboundResult } from "../../workers/relay/frames.ts";
import type { ReplyChannel } from "../../workers/runtime/index.ts";
import type { Outbox } from "./outbox.ts";

/** Where a relayed reply goes: the chat of the inbound frame it answers. */
export interface RelayedChat {
  platform: string;
  chatId: string;
  threadId: string | null;
  /** The frame's opaque target, handed back so the connector reaches exactly that chat (and a Discord interaction). */
  target: string | null;
  private: boolean;
}

/** Used when the connector sent no descriptor for a platform. */
const FALLBACK_EDIT_INTERVAL_MS = 3_100;

function failure(platform: string, r: OutboundResult): PlatformApiError {
  return new PlatformApiError(
    platform as ReplyTarget["platform"],
    r.code ?? "rejected",
    r.error ?? "the connector refused the action",
    r.retry_after !== undefined ? { retryAfter: r.retry_after } : {},
  );
}

/**
 * The runtime's reply channel on a relay gateway: every show is an outbound `send` or `edit`
 * with the reply's Markdown, which the connector renders natively and splits at the
 * platform's limit (returning the ids of every message showing it), exactly as it does for
 * its own replies. Streaming by edits works the same as at the edge.
 */
export function relayChannel(outbox: Outbox, chat: RelayedChat, descriptor: Descriptor | undefined): ReplyChannel {
  const ops = descriptor?.supported_ops ?? ["send", "edit", "typing"];
  const interval = descriptor?.edit_interval_ms
    ? chat.private
      ? descriptor.edit_interval_ms.private
      : descriptor.edit_interval_ms.group
    : FALLBACK_EDIT_INTERVAL_MS;
  const where = { chat_id: chat.chatId, thread_id: chat.threadId, ...(chat.target ? { target: chat.target } : {}) };
  const run = async (action: Parameters<Outbox["request"]>[1]): Promise<Shown> => {
    const r = await outbox.request(chat.platform, action);
    if (!r.success) throw failure(chat.platform, r);
    return { ids: resultIds(r), complete: r.complete ?? action.final === true };
  };
  return {
    caps: { edits: descriptor?.supports_edit !== false && ops.includes("edit"), typing: ops.includes("typing"), editIntervalMs: interval },
    typing: async () => outbox.notify(chat.platform, { op: "typing", ...where }),
    // The first post of a reply carries its key: the connector posts it once however often it is sent.
    show: (markdown, ids, mode, key) =>
      ids.length === 0
        ? run({ op: "send", ...where, content: markdown, final: mode === "final", ...(key ? { idempotency_key: key } : {}) })
        : run({ op: "edit", ...where, content: markdown, message_id: ids[0], message_ids: [...ids], final: mode === "final" }),
    post: async (markdown) => (await run({ op: "send", ...where, content: markdown, final: true })).ids,
  };
}
