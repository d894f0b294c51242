import { isPlatformName } from "../../workers/platforms/names.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { PlatformApiError, type ReplyTarget } from "../../workers/platforms/types.ts";
import { OutboundResult, resultIds, targetFromWire, type OutboundAction } from "../../workers/relay/frames.ts";
import { sha256Hex } from "../../workers/security.ts";
import { errorMessage } from "../../workers/log/index.ts";
import type { KeyedSends } from "./buffer.ts";

/** What a gateway may act on: the platforms it said hello for, and where keyed sends are remembered. */
export interface OutboundContext {
  env: Env;
  fronted: readonly string[];
  sends?: KeyedSends;
}

/**
 * Runs a gateway's outbound action on its platform, through the same adapter the edge's
 * own replies use: content is Markdown, rendered natively and split at the platform's
 * limit (`final`, the default, shows all of it; a streaming update shows the first part).
 * Platform refusals come back as `success: false` with a code (and `retry_after` for 429s).
 */
export async function runOutbound(ctx: OutboundContext, action: OutboundAction, platformHint: string | undefined): Promise<OutboundResult> {
  const platform = platformHint ?? (ctx.fronted.length === 1 ? ctx.fronted[0] : undefined);
  if (!platform || !isPlatformName(platform) || !ctx.fronted.includes(platform)) {
    return { success: false, code: "unknown_platform", error: `outbound for ${platform ?? "an unnamed platform"}, which this gateway has not said hello for` };
  }
  const adapter = adapterFor(ctx.env, platform);
  if (!adapter) return { success: false, code: "platform_not_configured", error: `${platform} has no credentials on the connector` };
  try {
    return await run(adapter, platform, action, ctx.sends);
  } catch (err) {
    if (err instanceof PlatformApiError)
      return { success: false, code: err.code, error: err.message, ...(err.retryAfter !== undefined ? { retry_after: err.retryAfter } : {}) };
    return { success: false, code: "internal", error: errorMessage(err) };
  }
}

async function targetOf(adapter: NonNullable<ReturnType<typeof adapterFor>>, platform: string, a: OutboundAction): Promise<ReplyTarget> {
  const given = targetFromWire(a.target);
  // Only a target this platform's codec reads is used; anything else is ignored for the chat the action names.
  if (given && given.platform === platform && adapter.targets.decode(given)) return given;
  // Hermes gateways name the chat (and put a reply's thread in metadata.thread_id).
  const thread = a.thread_id ?? (a.metadata?.thread_id === null || a.metadata?.thread_id === undefined ? null : String(a.metadata.thread_id));
  return (await adapter.destination(a.chat_id, thread)).target;
}

/**
 * A `send` under an idempotency key: the first one posts and is remembered; the same key
 * again returns what was posted, after editing it to this content where the content (or
 * live/final) differs. A platform without edits posts the new content (its reply shows
 * twice then: nothing else would show the rest).
 */
async function keyedSend(
  adapter: NonNullable<ReturnType<typeof adapterFor>>,
  target: ReplyTarget,
  a: OutboundAction,
  key: string,
  sends: KeyedSends,
): Promise<OutboundResult> {
  // The key is the gateway's; kept per chat, so the same key sent to another chat never edits this chat's messages.
  const scoped = `${key}\n${JSON.stringify(target)}`;
  // One at a time per key: a gateway back from a restart can resend while the first send is still out.
  return sends.inTurn(scoped, async () => {
    const mode = a.final === false ? "live" : "final";
    const content = a.content ?? "";
    const hash = await sha256Hex(`${mode}\n${content}`);
    const before = sends.get(scoped);
    const earlier = before ? OutboundResult.safeParse(JSON.parse(before.result)) : null;
    if (before && earlier?.success && before.contentHash === hash) return earlier.data;
    const known = earlier?.success && adapter.capabilities.edits ? resultIds(earlier.data) : [];
    const { ids, complete } = await adapter.show(target, content, known, mode);
    const result: OutboundResult = { success: true, message_id: ids[0], message_ids: ids, complete };
    sends.put(scoped, { contentHash: hash, result: JSON.stringify(result) });
    return result;
  });
}

async function run(
  adapter: NonNullable<ReturnType<typeof adapterFor>>,
  platform: string,
  a: OutboundAction,
  sends: KeyedSends | undefined,
): Promise<OutboundResult> {
  const mode = a.final === false ? "live" : "final";
  switch (a.op) {
    case "send": {
      const target = await targetOf(adapter, platform, a);
      if (a.idempotency_key && sends) return await keyedSend(adapter, target, a, a.idempotency_key, sends);
      const { ids, complete } = await adapter.show(target, a.content ?? "", [], mode);
      return { success: true, message_id: ids[0], message_ids: ids, complete };
    }
    case "edit": {
      const known = a.message_ids ?? (a.message_id !== undefined ? [a.message_id] : []);
      if (known.length === 0) return { success: false, code: "bad_action", error: "edit needs action.message_id" };
      const { ids, complete } = await adapter.show(await targetOf(adapter, platform, a), a.content ?? "", known, mode);
      return { success: true, message_id: ids[0], message_ids: ids, complete };
    }
    case "typing":
      await adapter.typing?.(await targetOf(adapter, platform, a));
      return { success: true };
    case "thread_create": {
      const thread = await adapter.createHandoffThread(a.chat_id, String(a.thread_name ?? "thread").slice(0, 100));
      // chat_id too: on Discord a thread is a channel of its own.
      return thread
        ? { success: true, thread_id: thread.threadId, chat_id: thread.chatId }
        : { success: false, code: "threads_unavailable", error: `no thread could be made in ${a.chat_id}` };
    }
    default:
      return { success: false, code: "unsupported_op", error: `op '${a.op}' is not supported (send, edit, typing, thread_create)` };
  }
}
