import type { Context } from "hono";
import { isAllowed, isPlatformName } from "../config.ts";
import { db } from "../db/client.ts";
import { claimRefusal, markDeliveryAccepted, recordDelivery } from "../db/platform-state.ts";
import { routeFor } from "../db/routes.ts";
import { ApiError, errorBody } from "../http/errors.ts";
import { sessionAgent } from "../http/sessions.ts";
import { isChatCommand, runCommand } from "./commands.ts";
import { gatewayFor, isRelayed, relayObject } from "../relay/config.ts";
import { adapterFor, platformSettings } from "./registry.ts";
import { buildSessionKey } from "./session-key.ts";
import { sessionForSource } from "./sessions.ts";
import type { InboundMessage, PlatformAdapter } from "./types.ts";

/** The short answer an unauthorised user gets (at most once per chat per 10 minutes). */
export const REFUSAL_TEXT = "Sorry, you are not allowed to use this bot. Ask its owner to add your user id to the allowed users.";

const ok = () => new Response(null, { status: 200 });

/**
 * A platform webhook, in order: the platform must be enabled; the body is verified
 * (secret or signature, before any parsing: 401 otherwise); parsed; messages not for the
 * bot are ignored; unauthorised users are refused; the delivery id is recorded so a
 * redelivery does nothing; then a chat command runs, or the message is handed to its
 * session's object, durably, before the platform gets its 2xx.
 */
export async function handleWebhook(c: Context<{ Bindings: Env }>, platform: string): Promise<Response> {
  const env = c.env;
  if (!isPlatformName(platform)) throw new ApiError(404, "not_found", `unknown platform ${platform}`);
  const settings = platformSettings(env, platform);
  if (!settings.enabled) throw new ApiError(404, "not_found", `${platform} is not enabled on this Worker (missing ${settings.missing.join(", ")})`);
  const adapter = adapterFor(env, platform)!;
  const raw = new Uint8Array(await c.req.arrayBuffer());
  const verified = await adapter.verify(c.req.raw.headers, raw, Date.now());
  if (!verified.ok) {
    console.warn(`${platform}: webhook refused (${verified.reason})`);
    return c.json(errorBody("unauthorized", verified.reason === "stale" ? "webhook timestamp outside the accepted window" : "bad or missing webhook signature"), 401);
  }
  const intake = await adapter.parse(new TextDecoder().decode(raw), c.req.raw.headers);
  if (intake.kind !== "message" && intake.malformed) console.warn(`${platform}: ignored a signed delivery that does not match the platform's schema (${intake.malformed})`);
  if (intake.kind === "respond") return intake.response;
  if (intake.kind === "ignore") return ok();
  const { response, work } = await takeIn(env, adapter, intake.message);
  if (work) c.executionCtx.waitUntil(work.catch((err: unknown) => console.error(`${platform}: follow-up failed`, err instanceof Error ? err.message : String(err))));
  return response;
}

/** Commands the connector answers itself for relayed platforms; the rest go to the gateway. */
const LOCAL_ON_RELAY = new Set(["help", "sethome", "start"]);

/** Where a relayed message went, said on platforms that need an immediate visible answer. */
export const RELAYED_NOTE = "⏳ Sent to your gateway; the reply follows here.";

/**
 * A relayed platform: `/stop` becomes `interrupt_inbound` for exactly this session key;
 * anything else is stored in the gateway's buffer and sent to it live. The delivery id is
 * recorded in D1 alongside (both before the 2xx) rather than first, so the frame does not
 * wait on that write: the Relay object remembers every delivery it relayed (for a week,
 * acknowledged or not), so a redelivery is never relayed twice, even to a gateway that
 * lost its own record.
 */
async function relayIn(env: Env, adapter: PlatformAdapter, message: InboundMessage, key: string): Promise<{ response: Response; work?: Promise<unknown> }> {
  const d = db(env);
  const relay = relayObject(env, gatewayFor(env, adapter.name)!);
  const recorded = recordDelivery(d, adapter.name, message.deliveryId, key);
  const accepted = async () => {
    if ((await recorded).state !== "accepted") await markDeliveryAccepted(d, adapter.name, message.deliveryId, null);
  };
  if (message.command?.name === "stop") {
    // A redelivered /stop must not stop whatever newer turn runs now.
    if ((await recorded).state === "accepted") return { response: adapter.acknowledge(message) };
    const reached = await relay.interruptInbound(key, message.source.chatId);
    const sent = reply(adapter, message, reached ? "Stopping…" : "Nothing is running here: the gateway is offline.");
    return { response: sent.response, work: Promise.all([sent.work, accepted()]) };
  }
  const { source } = message;
  const delivered = relay.deliver({
    deliveryKey: `${adapter.name}:${message.deliveryId}`,
    event: {
      text: message.text,
      message_id: message.messageId,
      session_key: key,
      source: {
        platform: source.platform,
        chat_id: source.chatId,
        chat_type: source.chatType,
        user_id: source.userId,
        user_name: source.userName ?? null,
        thread_id: source.threadId ?? null,
        ...(source.workspaceId ? { scope_id: source.workspaceId } : {}),
      },
    },
  });
  await Promise.all([delivered, recorded]);
  // Discord's deferred "thinking…" would never be edited: the gateway replies in the channel.
  const response = adapter.name === "discord" ? (adapter.respondInline?.(message, RELAYED_NOTE) ?? adapter.acknowledge(message)) : adapter.acknowledge(message);
  return { response, work: accepted() };
}

/** Reply with `text`: inline in the HTTP answer where the platform allows, else by API call. */
function reply(adapter: PlatformAdapter, message: InboundMessage, text: string): { response: Response; work?: Promise<unknown> } {
  const inline = adapter.respondInline?.(message, text);
  if (inline) return { response: inline };
  return { response: ok(), work: adapter.send(message.target, text) };
}

async function takeIn(env: Env, adapter: PlatformAdapter, message: InboundMessage): Promise<{ response: Response; work?: Promise<unknown> }> {
  const d = db(env);
  const { source } = message;
  const key = buildSessionKey(source);
  const settings = platformSettings(env, adapter.name);
  // Threads and topics bound to a session (a handoff thread, say) hear every message.
  if (!message.addressed && !(source.threadId && (await routeFor(d, key, { boundOnly: true })))) return { response: ok() };
  if (!isAllowed(settings.allowed, source.userId)) {
    if (await claimRefusal(d, adapter.name, message.target.chatId)) return reply(adapter, message, REFUSAL_TEXT);
    return { response: adapter.respondInline?.(message, REFUSAL_TEXT) ?? ok() };
  }
  if (isRelayed(env, adapter.name) && !(message.command && LOCAL_ON_RELAY.has(message.command.name))) return relayIn(env, adapter, message, key);
  const delivery = await recordDelivery(d, adapter.name, message.deliveryId, key);
  if (delivery.state === "accepted") return { response: adapter.acknowledge(message) };
  if (isChatCommand(message.command)) {
    const text = await runCommand(d, env, source, message.command);
    const sent = reply(adapter, message, text);
    const accepted = markDeliveryAccepted(d, adapter.name, message.deliveryId, null);
    return { response: sent.response, work: Promise.all([sent.work, accepted]) };
  }
  const { sessionId } = await sessionForSource(d, env, source, delivery.sessionId);
  await sessionAgent(env, sessionId).enqueue({
    sessionId,
    content: message.text,
    target: message.target,
    deliveryKey: `${adapter.name}:${message.deliveryId}`,
  });
  // The object holds the message now (and dedupes it); recording that can trail the 2xx.
  return { response: adapter.acknowledge(message), work: markDeliveryAccepted(d, adapter.name, message.deliveryId, sessionId) };
}
