import type { Context } from "hono";
import { db } from "../db/client.ts";
import { errorBody } from "../errors.ts";
import { commandSpec } from "../platforms/commands.ts";
import { isPlatformName } from "../platforms/names.ts";
import { logger } from "../log/index.ts";
import { adapterFor } from "../platforms/registry.ts";
import { buildSessionKey } from "../platforms/session-key.ts";
import type { PlatformAdapter, PlatformEvent, SuggestRequest } from "../platforms/types.ts";
import { inboundFrameEvent } from "../relay/frames.ts";
import { isAllowed, settings } from "../settings.ts";
import { commandPermission, permissionRefusal } from "./permissions.ts";
import { describeSession, suggestForSource } from "./sessions.ts";
import { inbox, refusalKey, relayObject } from "./stubs.ts";
import { helpText, refusalText, whoamiText } from "./texts.ts";

const ok = () => new Response(null, { status: 200 });

/** Commands the connector answers itself for relayed platforms; the rest go to the gateway. */
const LOCAL_ON_RELAY = new Set(["help", "sethome", "whoami"]);

/** Commands whose answer needs nothing but config: answered in the HTTP response where the platform allows. */
function staticAnswer(env: Env, adapter: PlatformAdapter, event: PlatformEvent): string | null {
  if (event.kind !== "command") return null;
  // Only commands for anyone have an answer that needs nothing but config.
  if (commandSpec(event.name).who !== "anyone") return null;
  if (event.name === "help") return helpText(adapter.commands);
  if (event.name === "whoami") return whoamiText(adapter.name, event.source.userId, isAllowed(settings(env).platforms[adapter.name].allowed, event.source.userId));
  return null;
}

/** A follow-up that may outlive the response (it must never fail the webhook). */
function after(c: Context<{ Bindings: Env }>, platform: string, work: Promise<unknown> | undefined): void {
  if (!work) return;
  c.executionCtx.waitUntil(work.catch((err: unknown) => logger.child(platform).error("follow-up failed", { err })));
}

/**
 * A platform webhook, with at most one remote round trip before its answer: the platform
 * must be enabled; the body is verified over its raw bytes before anything is parsed (401
 * otherwise); parsed, with no I/O, into an event; an unauthorised user is refused; then the
 * event goes to the key's Inbox (or a relayed platform's Relay), which stores it durably
 * and answers. Everything else (the turn, a command's work, D1) happens after the answer.
 */
export async function handleWebhook(c: Context<{ Bindings: Env }>, platform: string): Promise<Response> {
  const env = c.env;
  if (!isPlatformName(platform)) return c.json(errorBody("not_found", `unknown platform ${platform}`), 404);
  const ps = settings(env).platforms[platform];
  if (!ps.enabled) return c.json(errorBody("not_found", `${platform} is not enabled on this Worker (missing ${ps.missing.join(", ")})`), 404);
  const adapter = adapterFor(env, platform)!;
  const raw = new Uint8Array(await c.req.arrayBuffer());
  const verified = await adapter.verify(c.req.raw.headers, raw, Date.now());
  if (!verified.ok) {
    console.warn(`${platform}: webhook refused (${verified.reason})`);
    return c.json(errorBody("unauthorized", verified.reason === "stale" ? "webhook timestamp outside the accepted window" : "bad or missing webhook signature"), 401);
  }
  const ingest = adapter.ingest(new TextDecoder().decode(raw), c.req.raw.headers);
  after(c, platform, adapter.warm?.());
  if (ingest.kind === "suggest") return suggest(env, ingest.request);
  if (ingest.kind !== "event") {
    if (ingest.malformed) console.warn(`${platform}: ignored a signed delivery that does not match the platform's schema (${ingest.malformed})`);
    return ingest.kind === "respond" ? ingest.response : ok();
  }
  const { event } = ingest;
  // Not for the bot and outside a thread: nothing can make it a turn, except the rest of an
  // album whose caption was for the bot (its Inbox joins them and drops a lone one; a
  // gateway gets each part as it comes, so only addressed ones).
  const albumPart = event.kind === "message" && event.album !== undefined && !ps.gateway;
  if (event.addressed === false && !event.source.threadId && !albumPart) return ok();
  // /whoami is for everyone (it tells you what to ask the owner for); /help too.
  const known = event.addressed === true ? staticAnswer(env, adapter, event) : null;
  const inlineAnswer = known !== null ? adapter.answerInline(event, known) : null;
  if (inlineAnswer) return inlineAnswer;
  const allowed = isAllowed(ps.allowed, event.source.userId);
  if (known !== null && !allowed) return answerOnce(c, adapter, event, known);
  const permission = event.kind === "command" ? commandPermission(env, event.name, event.source) : null;
  if (event.kind === "command" && permission && !permission.ok && permission.need !== "allowed") return refuseCommand(c, adapter, event, permissionRefusal(event.name, event.source, permission.need));
  // Only allowed users reach an Inbox, and admins for an admin's command (`/sethome`).
  const admitted = allowed || (event.kind === "command" && permission?.ok === true && commandSpec(event.name).who === "admin");
  if (!admitted) return refuse(c, adapter, event);
  const key = buildSessionKey(event.source);
  if (ps.gateway && !(event.kind === "command" && LOCAL_ON_RELAY.has(event.name))) return relayIn(c, adapter, event, key, ps.gateway);
  const taken = await inbox(env, key).take({ key, event });
  return taken === "ignored" ? ok() : adapter.ack(event);
}

/**
 * An autocomplete answer, the one webhook that reads D1 before answering (the choices are
 * the answer): `/resume` offers the sessions the user may resume; anyone not allowed, or
 * not named, is offered nothing.
 */
async function suggest(env: Env, request: SuggestRequest): Promise<Response> {
  const { source } = request;
  if (request.command !== "resume" || !source || !commandPermission(env, request.command, source).ok) return request.respond([]);
  const found = await suggestForSource(db(env), env, source, request.query).catch((err: unknown) => {
    logger.child(source.platform).warn("autocomplete could not read the sessions", { err });
    return [];
  });
  return request.respond(found.map((s) => ({ name: describeSession(s), value: s.id })));
}

/**
 * /whoami or /help from someone not allowed, where it cannot be answered inline: posted
 * once per delivery (the chat's refusal object remembers it), with no session or Inbox.
 */
async function answerOnce(c: Context<{ Bindings: Env }>, adapter: PlatformAdapter, event: PlatformEvent, text: string): Promise<Response> {
  if (await inbox(c.env, refusalKey(adapter.name, event.source.chatId)).firstSight(`${adapter.name}:${event.deliveryId}`)) after(c, adapter.name, adapter.post(event.target, text));
  return ok();
}

/** A command this user may not run (an admin's command, a place it does not work in): inline where the platform allows, else posted once. */
async function refuseCommand(c: Context<{ Bindings: Env }>, adapter: PlatformAdapter, event: PlatformEvent, text: string): Promise<Response> {
  if (event.addressed === false) return ok();
  return adapter.answerInline(event, text) ?? answerOnce(c, adapter, event, text);
}

/** The refusal: inline where the platform allows (seen only by the sender), else at most once per chat per 10 minutes. */
async function refuse(c: Context<{ Bindings: Env }>, adapter: PlatformAdapter, event: PlatformEvent): Promise<Response> {
  if (event.addressed === false) return ok();
  const text = refusalText(adapter.name, event.source.userId);
  const inline = adapter.answerInline(event, text);
  if (inline) return inline;
  if (await inbox(c.env, refusalKey(adapter.name, event.source.chatId)).claimRefusal()) after(c, adapter.name, adapter.post(event.target, text));
  return ok();
}

/**
 * A relayed platform: `/stop` becomes `interrupt_inbound` for exactly this session key;
 * anything else is stored in the gateway's buffer (taken in once: the Relay object
 * remembers every delivery it relayed) and sent to it live.
 */
async function relayIn(c: Context<{ Bindings: Env }>, adapter: PlatformAdapter, event: PlatformEvent, key: string, gatewayId: string): Promise<Response> {
  const relay = relayObject(c.env, gatewayId);
  const deliveryKey = `${adapter.name}:${event.deliveryId}`;
  if (event.kind === "command" && event.name === "stop") {
    const reached = await relay.interruptInbound({ deliveryKey, sessionKey: key, chatId: event.source.chatId });
    // A redelivery gets the same kind of answer as the first delivery, and does nothing.
    const text = reached === "duplicate" ? "This /stop was already received." : reached === "sent" ? "Stopping…" : "Nothing is running here: the gateway is offline.";
    const inline = adapter.answerInline(event, text);
    if (inline) return inline;
    if (reached !== "duplicate") after(c, adapter.name, adapter.post(event.target, text));
    return ok();
  }
  const media = event.kind === "message" && event.attachments.length > 0 ? { platform: adapter.name, attachments: event.attachments } : undefined;
  await relay.deliver({ deliveryKey, gatewayId, event: inboundFrameEvent(event, key, { ...adapter.describeTarget(event.target), chatType: adapter.wireChatType?.(event.source) }), ...(media ? { media } : {}) });
  return adapter.ack(event);
}
