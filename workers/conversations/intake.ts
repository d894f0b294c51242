import { db } from "../db/client.ts";
import { commandSpec } from "../platforms/commands.ts";
import { isPlatformName } from "../platforms/names.ts";
import { logger } from "../log/index.ts";
import { adapterFor } from "../platforms/registry.ts";
import { buildSessionKey } from "../platforms/session-key.ts";
import type { Choice, PlatformAdapter, PlatformEvent, SuggestRequest } from "../platforms/types.ts";
import { inboundFrameEvent } from "../relay/frames.ts";
import { isAllowed, settings } from "../settings.ts";
import { commandPermission, permissionRefusal } from "./permissions.ts";
import { describeSession, suggestForSource } from "./sessions.ts";
import { inbox, refusalKey, relayObject } from "./stubs.ts";
import { helpText, refusalText, whoamiText } from "./texts.ts";

/**
 * Commands the connector answers itself for relayed platforms; the rest go to the gateway.
 * Linking lives in D1 at the edge; `/handoff` is answered here with why it cannot run.
 */
const LOCAL_ON_RELAY = new Set(["help", "sethome", "whoami", "link", "unlink", "handoff"]);

/** Where a verified event came from and what its answer can carry: plain values, so webhooks, a gateway connection and bridges share the intake. */
export interface IntakeInput {
  env: Env;
  adapter: PlatformAdapter;
  event: PlatformEvent;
  /** True when the answer to this delivery can carry text seen only by the sender (Discord interactions, Slack slash commands). */
  inline: boolean;
  /** Keeps follow-up work (a post, a refusal) alive after the answer; it never fails the delivery. */
  waitUntil: (work: Promise<unknown>) => void;
}

/** Why a delivery is taken in and nothing follows. */
export type IgnoredReason = "not_addressed" | "duplicate" | "answered_by_post";
/** Why a sender is refused: not on the platform's allow list, or a command they may not run here. */
export type RefusedCode = "not_allowed" | "command_not_permitted";

/**
 * What the intake made of a verified delivery; the transport maps it to its own answer
 * (a webhook: the platform's ack, an inline answer, or a plain 2xx).
 */
export type IntakeResult =
  /**
   * Stored by the key's Inbox (or a relayed platform's Relay): the reply follows by API call.
   * `duplicate`: the Inbox had it already (a redelivery gets the same ack).
   */
  | { kind: "accepted"; duplicate?: true }
  /** Answered with `text` in the answer itself (only when the input said `inline`). */
  | { kind: "answered"; text: string }
  /** Nothing more to do here (any answer went out as a post). */
  | { kind: "ignored"; reason: IgnoredReason }
  /** The sender may not do this; `text`, when set, is the refusal to carry inline. */
  | { kind: "refused"; code: RefusedCode; text?: string };

/** Why a platform's deliveries cannot be taken in at all. */
export type PlatformRefusal = { kind: "bad_input"; code: "not_found"; message: string };

/** The adapter for a platform named in a request, or why there is none (unknown, or not enabled on this Worker). */
export function platformIntake(env: Env, platform: string): { kind: "ready"; adapter: PlatformAdapter } | PlatformRefusal {
  if (!isPlatformName(platform)) return { kind: "bad_input", code: "not_found", message: `unknown platform ${platform}` };
  const ps = settings(env).platforms[platform];
  if (!ps.enabled) return { kind: "bad_input", code: "not_found", message: `${platform} is not enabled on this Worker (missing ${ps.missing.join(", ")})` };
  const adapter = adapterFor(env, platform);
  return adapter ? { kind: "ready", adapter } : { kind: "bad_input", code: "not_found", message: `${platform} has no adapter on this Worker` };
}

/** Commands whose answer needs nothing but config: answered in the answer itself where the platform allows. */
function staticAnswer(env: Env, adapter: PlatformAdapter, event: PlatformEvent): string | null {
  if (event.kind !== "command") return null;
  // Only commands for anyone have an answer that needs nothing but config.
  if (commandSpec(event.name).who !== "anyone") return null;
  if (event.name === "help") return helpText(adapter.commands);
  // An allowed user's /whoami lists their linked accounts (D1): it goes to the Inbox like other commands.
  if (event.name === "whoami" && !isAllowed(settings(env).platforms[adapter.name].allowed, event.source.userId, event.source.userAltId))
    return whoamiText(adapter.name, event.source.userId, false);
  return null;
}

/** A follow-up that may outlive the answer (it must never fail the delivery). */
function after(input: IntakeInput, work: Promise<unknown> | undefined): void {
  if (!work) return;
  const platform = input.adapter.name;
  input.waitUntil(work.catch((err: unknown) => logger.child(platform).error("follow-up failed", { err })));
}

/**
 * A verified event, with at most one remote round trip before its result: an unauthorised
 * user is refused; then the event goes to the key's Inbox (or a relayed platform's Relay),
 * which stores it durably. Everything else (the turn, a command's work, D1) happens after.
 */
export async function takeIn(input: IntakeInput): Promise<IntakeResult> {
  const { env, adapter, event } = input;
  const ps = settings(env).platforms[adapter.name];
  // Not for the bot and outside a thread: nothing can make it a turn, except the rest of an
  // album whose caption was for the bot (its Inbox joins them and drops a lone one; a
  // gateway gets each part as it comes, so only addressed ones).
  const albumPart = event.kind === "message" && event.album !== undefined && !ps.gateway;
  if (event.addressed === false && !event.source.threadId && !albumPart) return { kind: "ignored", reason: "not_addressed" };
  // /whoami is for everyone (it tells you what to ask the owner for); /help too.
  const known = event.addressed === true ? staticAnswer(env, adapter, event) : null;
  if (known !== null && input.inline) return { kind: "answered", text: known };
  const allowed = isAllowed(ps.allowed, event.source.userId, event.source.userAltId);
  if (known !== null && !allowed) return answerOnce(input, known);
  const permission = event.kind === "command" ? commandPermission(env, event.name, event.source) : null;
  if (event.kind === "command" && permission && !permission.ok && permission.need !== "allowed")
    return refuseCommand(input, permissionRefusal(event.name, event.source, permission.need));
  // Only allowed users reach an Inbox, and admins for an admin's command (`/sethome`).
  const admitted = allowed || (event.kind === "command" && permission?.ok === true && commandSpec(event.name).who === "admin");
  if (!admitted) return refuse(input);
  const key = buildSessionKey(event.source);
  if (ps.gateway && !(event.kind === "command" && LOCAL_ON_RELAY.has(event.name))) return relayIn(input, key, ps.gateway);
  const taken = await inbox(env, key).take(event);
  if (taken === "ignored") return { kind: "ignored", reason: "not_addressed" };
  return taken === "duplicate" ? { kind: "accepted", duplicate: true } : { kind: "accepted" };
}

/**
 * An autocomplete's choices, the one delivery that reads D1 before answering (the choices
 * are the answer): `/resume` offers the sessions the user may resume; anyone not allowed,
 * or not named, is offered nothing.
 */
export async function suggestions(env: Env, request: SuggestRequest): Promise<Choice[]> {
  const { source } = request;
  if (request.command !== "resume" || !source || !commandPermission(env, request.command, source).ok) return [];
  const found = await suggestForSource(db(env), env, source, request.query).catch((err: unknown) => {
    logger.child(source.platform).warn("autocomplete could not read the sessions", { err });
    return [];
  });
  return found.map((s) => ({ name: describeSession(s), value: s.id }));
}

/**
 * /whoami or /help from someone not allowed, where it cannot be answered inline: posted
 * once per delivery (the chat's refusal object remembers it), with no session or Inbox.
 */
async function answerOnce(input: IntakeInput, text: string): Promise<IntakeResult> {
  const { env, adapter, event } = input;
  const first = await inbox(env, refusalKey(adapter.name, event.source.chatId)).firstSight(`${adapter.name}:${event.deliveryId}`);
  if (!first) return { kind: "ignored", reason: "duplicate" };
  after(input, adapter.post(event.target, text));
  return { kind: "ignored", reason: "answered_by_post" };
}

/** A command this user may not run (an admin's command, a place it does not work in): inline where the platform allows, else posted once. */
async function refuseCommand(input: IntakeInput, text: string): Promise<IntakeResult> {
  if (input.event.addressed === false) return { kind: "ignored", reason: "not_addressed" };
  if (input.inline) return { kind: "refused", code: "command_not_permitted", text };
  await answerOnce(input, text);
  return { kind: "refused", code: "command_not_permitted" };
}

/** The refusal: inline where the platform allows (seen only by the sender), else at most once per chat per 10 minutes. */
async function refuse(input: IntakeInput): Promise<IntakeResult> {
  const { env, adapter, event } = input;
  if (event.addressed === false) return { kind: "ignored", reason: "not_addressed" };
  const text = refusalText(adapter.name, event.source.userId);
  if (input.inline) return { kind: "refused", code: "not_allowed", text };
  if (await inbox(env, refusalKey(adapter.name, event.source.chatId)).claimRefusal()) after(input, adapter.post(event.target, text));
  return { kind: "refused", code: "not_allowed" };
}

/**
 * A relayed platform: `/stop` becomes `interrupt_inbound` for exactly this session key;
 * anything else is stored in the gateway's buffer (taken in once: the Relay object
 * remembers every delivery it relayed) and sent to it live.
 */
async function relayIn(input: IntakeInput, key: string, gatewayId: string): Promise<IntakeResult> {
  const { env, adapter, event } = input;
  const relay = relayObject(env, gatewayId);
  const deliveryKey = `${adapter.name}:${event.deliveryId}`;
  if (event.kind === "command" && event.name === "stop") {
    const reached = await relay.interruptInbound({ deliveryKey, sessionKey: key, chatId: event.source.chatId });
    // A redelivery gets the same kind of answer as the first delivery, and does nothing.
    const text =
      reached === "duplicate" ? "This /stop was already received." : reached === "sent" ? "Stopping…" : "Nothing is running here: the gateway is offline.";
    if (input.inline) return { kind: "answered", text };
    if (reached === "duplicate") return { kind: "ignored", reason: "duplicate" };
    after(input, adapter.post(event.target, text));
    return { kind: "ignored", reason: "answered_by_post" };
  }
  const media = event.kind === "message" && event.attachments.length > 0 ? { platform: adapter.name, attachments: event.attachments } : undefined;
  await relay.deliver({
    deliveryKey,
    event: inboundFrameEvent(event, key, { ...adapter.describeTarget(event.target), chatType: adapter.wireChatType?.(event.source) }),
    ...(media ? { media } : {}),
  });
  return { kind: "accepted" };
}
