import { takeIn } from "../../workers/conversations/intake.ts";
import { logger } from "../../workers/log/index.ts";
import { isPlatformName } from "../../workers/platforms/names.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { BridgeActionIn, MAX_ACTIONS_PER_ENQUEUE, type BridgeResult } from "../../workers/relay/bridge.ts";
import { settings } from "../../workers/settings.ts";
import type { BridgeState } from "../../workers/platforms/connection.ts";
import type { ConnectorFrameIn, GatewayFrame } from "../../workers/relay/frames.ts";
import type { BridgeStore } from "./bridge-store.ts";

/** A retryable failure (signal-cli down, a rate limit) is tried again after this, or `retry_after`. */
export const BRIDGE_RETRY_MS = 5_000;
/** Codes of failures worth another attempt: the action stays first in the queue. */
const RETRYABLE = new Set(["rate_limited", "network", "unavailable"]);

/** Whether `platform` is bridged by this gateway (BRIDGE_PLATFORMS). */
export function bridgedBy(env: Env, platform: string, gatewayId: string): boolean {
  return isPlatformName(platform) && settings(env).platforms[platform].bridge === gatewayId;
}

/**
 * One received item from a bridging gateway, taken in exactly as a webhook delivery is:
 * parsed by the platform's adapter, then `takeIn` (allow lists, commands, the Inbox's
 * dedupe by sender and timestamp). Resolves true once it is stored or ignored for good
 * (the gateway may then forget it); a failure throws (no ack: the gateway sends it again).
 */
async function takeBridged(
  env: Env,
  store: BridgeStore,
  input: { gatewayId: string; platform: string; body: string; waitUntil: (p: Promise<unknown>) => void },
): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
  const { platform, gatewayId } = input;
  if (!bridgedBy(env, platform, gatewayId))
    return { ok: false, code: "platform_not_bridged", message: `${platform || "(none)"} is not bridged by gateway ${gatewayId} (BRIDGE_PLATFORMS)` };
  const adapter = adapterFor(env, platform);
  if (!adapter) return { ok: false, code: "platform_not_configured", message: `${platform} is not enabled on the connector` };
  const ingest = adapter.ingest(input.body, new Headers());
  const log = logger.child(`bridge ${gatewayId}`);
  if (ingest.kind !== "event") {
    if ("malformed" in ingest && ingest.malformed) log.warn(`skipped a ${platform} item (${ingest.malformed})`);
    return { ok: true };
  }
  const { source } = ingest.event;
  if (source.userAltId) store.learn(source.userAltId, source.userId, Date.now());
  await takeIn({ env, adapter, event: ingest.event, inline: false, waitUntil: input.waitUntil });
  return { ok: true };
}

/** Validates actions from the adapter (the Relay object's RPC boundary). */
export function checkActions(actions: unknown): BridgeActionIn[] {
  if (!Array.isArray(actions) || actions.length > MAX_ACTIONS_PER_ENQUEUE) throw new TypeError(`expected at most ${MAX_ACTIONS_PER_ENQUEUE} actions`);
  return actions.map((a) => BridgeActionIn.parse(a));
}

/** When a failed action may go again, or null when it failed for good. */
function retryAt(result: BridgeResult, now: number): number | null {
  if (result.success || !RETRYABLE.has(result.code ?? "")) return null;
  return now + (result.retry_after !== undefined ? Math.min(result.retry_after * 1000, 3_600_000) : BRIDGE_RETRY_MS);
}

/** The Relay's live socket as the bridge needs it. */
export interface LiveSocket {
  platforms: readonly string[];
  connId: string;
  send(frame: ConnectorFrameIn): boolean;
}

/** The Relay object's bridge side: its action queue going out to the live socket, one at a time. */
export class BridgeSide {
  readonly #store: BridgeStore;
  readonly #env: Env;
  readonly #waitUntil: (p: Promise<unknown>) => void;
  readonly #live: () => LiveSocket | null;

  constructor(store: BridgeStore, env: Env, ctx: Pick<DurableObjectState, "waitUntil">, live: () => LiveSocket | null) {
    this.#store = store;
    this.#env = env;
    this.#waitUntil = (p) => ctx.waitUntil(p);
    this.#live = live;
  }

  /**
   * Sends the first waiting action to the live socket, if that socket bridges its platform
   * and it is not already out there (one at a time, in order: an edit needs its message's
   * timestamp from the result before it). A socket that replaced the one an action went out
   * on gets it again; the gateway answers a repeat from its own record.
   */
  pump(): void {
    const live = this.#live();
    const head = this.#store.head();
    if (!live || !head) return;
    if (!live.platforms.includes(head.platform) || head.sentConn === live.connId || head.notBefore > Date.now()) return;
    if (live.send({ type: "bridge_action", actionId: head.actionId, platform: head.platform, call: this.#store.resolve(head) }))
      this.#store.markSent(head.actionId, live.connId);
  }

  /** Stores actions (typing only while the gateway is here) and sends the first. */
  enqueue(platform: string, actions: unknown): number {
    const checked = checkActions(actions);
    const live = this.#live();
    const here = live !== null && live.platforms.includes(platform);
    const kept = this.#store.enqueue(platform, here ? checked : checked.filter((a) => !a.transient), Date.now());
    if (!here) this.#store.dropTransient();
    this.pump();
    return kept;
  }

  /**
   * A bridge frame from the gateway: a received item (taken in, then acked; not acked when
   * the intake failed, so the gateway sends it again), an action's result (then the next
   * action goes), or its daemon's state. Returns when to wake for a retry, or null.
   */
  async frame(
    frame: Extract<GatewayFrame, { type: "bridge_inbound" | "bridge_result" | "bridge_status" }>,
    gatewayId: string,
    reply: (f: ConnectorFrameIn) => void,
  ): Promise<number | null> {
    const env = this.#env;
    const waitUntil = this.#waitUntil;
    const now = Date.now();
    if (frame.type === "bridge_status") {
      if (bridgedBy(env, frame.platform, gatewayId)) this.#store.setDaemon(frame.platform, frame.reachable, frame.detail ?? null, now);
      return null;
    }
    if (frame.type === "bridge_inbound") {
      try {
        const taken = await takeBridged(env, this.#store, { gatewayId, platform: frame.platform, body: frame.body, waitUntil });
        reply(taken.ok ? { type: "bridge_inbound_ack", id: frame.id } : { type: "error", code: taken.code, message: taken.message });
      } catch (err) {
        logger.child(`bridge ${gatewayId}`).error("taking in a bridged item failed; the gateway sends it again", { err });
      }
      return null;
    }
    const again = retryAt(frame.result, now);
    const settled = this.#store.settle(frame.actionId, frame.result, now, again);
    if (settled === "failed") logger.child(`bridge ${gatewayId}`).warn(`an action failed for good: ${frame.result.code ?? "?"} ${frame.result.error ?? ""}`);
    this.pump();
    return settled === "retry" ? again : null;
  }

  state(platform: string, gatewayId: string): BridgeState {
    const live = this.#live();
    return { gatewayId, connected: live !== null && live.platforms.includes(platform), ...this.#store.daemon(platform), waiting: this.#store.waiting() };
  }
}
