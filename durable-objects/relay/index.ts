import { DurableObject } from "cloudflare:workers";
import { inbox, sessionAgent } from "../../workers/conversations/stubs.ts";
import { isPlatformName } from "../../workers/platforms/names.ts";
import { logger } from "../../workers/log/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { platformOfKey } from "../../workers/platforms/session-key.ts";
import { descriptorFor } from "../../workers/relay/descriptor.ts";
import {
  checkGatewayFrame,
  CLOSE,
  encodeFrame,
  FrameDecoder,
  type ConnectorFrameIn,
  type GatewayFrame,
  type InboundEventIn,
} from "../../workers/relay/frames.ts";
import { REFUSAL_REASONS, refuseSocket, TOKEN_HEADER } from "../../workers/relay/socket.ts";
import { durableSql } from "../../workers/runtime/index.ts";
import { settings } from "../../workers/settings.ts";
import { nameless, objectName } from "../name.ts";
import { RelayStore, type RelayStatus } from "./buffer.ts";
import { BridgeStore } from "./bridge-store.ts";
import { BridgeSide, bridgedBy, type LiveSocket } from "./bridging.ts";
import type { BridgeState } from "../../workers/platforms/connection.ts";
import { fetchRelayMedia, RELAY_MEDIA_RETENTION_MS, withMediaLinks, type PendingMedia } from "./media.ts";
import { runOutbound } from "./outbound.ts";

/** A fetch of attachments that did not finish (the object died) is tried again after this. */
const MEDIA_RETRY_MS = 30_000;

/**
 * A live socket that has shown a sign of life (a frame, or a `{"type":"ping"}` answered by
 * the runtime) within this long keeps its place: a newcomer is refused with 4409 instead
 * of evicting it. Gateways ping every 10 s.
 */
export const LIVENESS_MS = 30_000;

/** Per-socket identity, kept with the socket across hibernation. */
interface SocketState {
  connId: string;
  gatewayId: string;
  connectedAt: number;
  /** When its first descriptor went out (0: no handshake yet). */
  handshakeAt: number;
  /** After going_idle: buffered-only until the next handshake. */
  idle: boolean;
  platforms: string[];
  /** When its last frame arrived (pings answered by the runtime are tracked by it). */
  lastFrameAt: number;
  /** The connector's origin as the gateway dialed it (media links point there). */
  origin?: string;
}

/**
 * One per gateway id: holds the gateway's WebSocket (hibernation API), keeps inbound
 * frames for it durably until acknowledged, replays them in order on every handshake,
 * and runs its outbound actions through the platform adapters.
 */
export class Relay extends DurableObject<Env> {
  readonly #store: RelayStore;
  readonly #bridge: BridgeStore;
  readonly #bridgeSide: BridgeSide;
  #flushing: Promise<void> = Promise.resolve();
  #fetching: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = durableSql(ctx.storage);
    this.#store = new RelayStore(sql);
    this.#bridge = new BridgeStore(sql);
    this.#bridgeSide = new BridgeSide(this.#bridge, env, ctx, () => this.#liveSocket());
    // Kept once, for an instance the runtime starts without its name (durable-objects/name.ts).
    if (ctx.id.name !== undefined && this.#store.meta("gateway_id") !== ctx.id.name) this.#store.setMeta("gateway_id", ctx.id.name);
    // Keepalives are answered by the runtime without waking this object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('{"type":"ping"}\n', '{"type":"pong"}\n'));
  }

  /**
   * The upgrade, already authenticated by the Worker. A token works once: one seen before
   * is refused (4401 `replayed`). While a live socket of this gateway shows signs of life,
   * a newcomer is refused (4409 `busy`) rather than evicting it; once the current socket
   * has been silent for {@link LIVENESS_MS}, the newcomer takes over at its handshake.
   */
  override async fetch(request: Request): Promise<Response> {
    const [, exp, sig] = /^(\d+):([0-9a-f]{64})$/.exec(request.headers.get(TOKEN_HEADER) ?? "") ?? [];
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket" || exp === undefined || sig === undefined)
      return new Response("expected a websocket upgrade", { status: 426 });
    const gatewayId = this.#gatewayId();
    const now = Date.now();
    if (!this.#store.useToken(sig, Number(exp), Math.floor(now / 1000))) {
      logger.child(`relay ${gatewayId}`).warn("refused a token that was already used");
      return refuseSocket(CLOSE.unauthorized, REFUSAL_REASONS.replayed);
    }
    const live = this.#live();
    if (live && now - this.#lastSign(live) < LIVENESS_MS) {
      logger.child(`relay ${gatewayId}`).warn("refused a second connection while the current one is live");
      return refuseSocket(CLOSE.replaced, "busy");
    }
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({
      connId: crypto.randomUUID(),
      gatewayId,
      connectedAt: now,
      handshakeAt: 0,
      idle: false,
      platforms: [],
      lastFrameAt: now,
      origin: new URL(request.url).origin,
    } satisfies SocketState);
    return new Response(null, { status: 101, webSocket: client });
  }

  #state(ws: WebSocket): SocketState {
    return ws.deserializeAttachment() as SocketState;
  }

  #setState(ws: WebSocket, state: SocketState): void {
    ws.serializeAttachment(state);
  }

  /** The last sign of life of a socket: its last frame or the last ping the runtime answered. */
  #lastSign(ws: WebSocket): number {
    const pinged = this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
    return Math.max(pinged, this.#state(ws).lastFrameAt ?? 0);
  }

  /** The socket that gets live traffic: the newest handshaked one that is not idle. */
  #live(): WebSocket | null {
    let best: WebSocket | null = null;
    let at = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const s = this.#state(ws);
      if (s.handshakeAt > at && !s.idle && ws.readyState === WebSocket.OPEN) {
        best = ws;
        at = s.handshakeAt;
      }
    }
    return best;
  }

  /** The live socket, as the bridge side sends on it. */
  #liveSocket(): LiveSocket | null {
    const live = this.#live();
    return live ? { platforms: this.#state(live).platforms, connId: this.#state(live).connId, send: (f) => this.#send(live, f) } : null;
  }

  #send(ws: WebSocket, frame: ConnectorFrameIn): boolean {
    try {
      ws.send(encodeFrame(frame));
      return true;
    } catch {
      return false;
    }
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const s = { ...this.#state(ws), lastFrameAt: Date.now() };
    this.#setState(ws, s);
    const decoder = new FrameDecoder(this.#store.partial(s.connId));
    const decoded = decoder.push(typeof message === "string" ? message : new TextDecoder().decode(message));
    if (decoded.tooBig) {
      this.#store.setPartial(s.connId, "");
      ws.close(CLOSE.tooBig, "frame too large");
      return;
    }
    // A frame split across messages survives this object hibernating in between.
    this.#store.setPartial(s.connId, decoder.partial);
    for (const obj of decoded.frames) {
      const checked = checkGatewayFrame(obj);
      if (checked.kind === "frame") await this.#handle(ws, checked.frame);
      else if (checked.kind === "malformed")
        this.#send(ws, { type: "error", code: "malformed_frame", message: `${checked.type} frame skipped (${checked.why})` });
    }
  }

  async #handle(ws: WebSocket, frame: GatewayFrame): Promise<void> {
    switch (frame.type) {
      case "hello":
        return this.#hello(ws, frame.platform);
      case "inbound_ack":
        return this.#store.ack(frame.bufferId);
      case "interrupt":
        return this.#gatewayInterrupt(ws, frame.session_key);
      case "outbound":
        // A send under an idempotency key is remembered in this object's store: the same key again does not post twice.
        void runOutbound({ env: this.env, fronted: this.#state(ws).platforms, sends: this.#store.keyedSends() }, frame.action, frame.platform).then((result) =>
          this.#send(ws, { type: "outbound_result", requestId: frame.requestId, result }),
        );
        return;
      case "going_idle":
        this.#setState(ws, { ...this.#state(ws), idle: true });
        this.#send(ws, { type: "going_idle_ack" });
        return;
      case "ping":
        this.#send(ws, { type: "pong" });
        return;
      case "bridge_inbound":
      case "bridge_result":
      case "bridge_status": {
        const armAt = await this.#bridgeSide.frame(frame, this.#state(ws).gatewayId, (f) => this.#send(ws, f));
        if (armAt !== null) await this.#armAlarm(armAt);
        return;
      }
    }
  }

  async #hello(ws: WebSocket, platform: string): Promise<void> {
    const s = this.#state(ws);
    const bridged = bridgedBy(this.env, platform, s.gatewayId);
    if (!bridged && (!isPlatformName(platform) || settings(this.env).platforms[platform].gateway !== s.gatewayId)) {
      this.#send(ws, {
        type: "error",
        code: "platform_not_relayed",
        message: `${platform || "(none)"} is not relayed to gateway ${s.gatewayId} (RELAY_PLATFORMS)`,
      });
      return;
    }
    const adapter = adapterFor(this.env, platform);
    if (!adapter) {
      this.#send(ws, { type: "error", code: "platform_not_configured", message: `${platform} has no credentials on the connector` });
      return;
    }
    const first = s.handshakeAt === 0 || s.idle;
    this.#setState(ws, { ...s, handshakeAt: first ? Date.now() : s.handshakeAt, idle: false, platforms: [...new Set([...s.platforms, platform])] });
    const descriptor = descriptorFor(platform, adapter.capabilities, settings(this.env).dailyTokenBudget);
    this.#send(ws, { type: "descriptor", descriptor: bridged ? { ...descriptor, bridged: true } : descriptor });
    if (bridged) this.#bridgeSide.pump();
    if (!first) return;
    // The newest socket takes over; the older ones are closed so nothing goes out twice.
    for (const other of this.ctx.getWebSockets()) {
      if (other !== ws && this.#state(other).handshakeAt > 0) other.close(CLOSE.replaced, "replaced");
    }
    // Every unacknowledged frame, in order (all sending goes through one chain, so nothing new slips in between).
    await this.#flush();
  }

  /**
   * Sends the buffered frames the live socket has not had, in order, stopping at the first
   * one still waiting for its attachments (what comes after it waits too). Serialised: a
   * handshake's replay and live deliveries never interleave.
   */
  #flush(): Promise<void> {
    const run = this.#flushing.then(async () => {
      const live = this.#live();
      if (!live) return;
      const s = this.#state(live);
      const secret = settings(this.env).relaySecrets.get(s.gatewayId)?.[0] ?? "";
      for (let batch = this.#store.unsent(s.connId); batch.length > 0; batch = this.#store.unsent(s.connId)) {
        for (const f of batch) {
          if (!f.ready) return;
          const text = await withMediaLinks(f.frame, f.media, { origin: s.origin ?? "", secret, nowS: Math.floor(Date.now() / 1000) });
          try {
            live.send(text);
          } catch {
            return; // it closed just now: the rest waits for the next handshake
          }
          this.#store.markSent(f.bufferId, s.connId);
        }
      }
    });
    this.#flushing = run.catch(() => undefined);
    return run;
  }

  /** Fetches the attachments of frames waiting for them, oldest first, then lets them go. */
  #fetchPending(): Promise<void> {
    this.#fetching ??= (async () => {
      try {
        await this.ctx.storage.setAlarm(Date.now() + MEDIA_RETRY_MS);
        for (let f = this.#store.pendingMedia()[0]; f; f = this.#store.pendingMedia()[0]) {
          const pending = JSON.parse(f.media ?? "{}") as PendingMedia;
          const gatewayId = this.#gatewayId();
          const media = await fetchRelayMedia(this.env, gatewayId, f.bufferId, pending);
          this.#store.setMedia(
            f.bufferId,
            JSON.stringify(media),
            media.flatMap((m) => (m.key ? [m.key] : [])),
            Date.now(),
          );
          await this.#flush();
        }
        await this.#pruneMedia();
      } finally {
        this.#fetching = null;
      }
    })();
    return this.#fetching;
  }

  /** Deletes relayed attachments past their retention. */
  async #pruneMedia(): Promise<void> {
    const keys = this.#store.expiredMedia(Date.now() - RELAY_MEDIA_RETENTION_MS);
    if (keys.length > 0) await this.env.FILES.delete(keys);
  }

  /** This object's gateway id: its name (durable-objects/name.ts). */
  #gatewayId(): string {
    const id = objectName(this.ctx, () => this.#store.meta("gateway_id"));
    if (id === null) throw nameless("Relay");
    return id;
  }

  /** Retries what a dead instance left (attachments still to fetch), and bridge actions whose retry is due. */
  override async alarm(): Promise<void> {
    this.#bridgeSide.pump();
    if (this.#store.pendingMedia().length > 0) await this.#fetchPending();
    else await this.#pruneMedia();
  }

  async #armAlarm(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /** Stores a bridged platform's actions (from its adapter, anywhere in the Worker) and sends the first if the gateway is here. */
  async enqueueBridged(platform: string, actions: unknown): Promise<number> {
    return this.#bridgeSide.enqueue(platform, actions);
  }

  /** A file a bridging gateway uploaded (`PUT /relay/upload/…`): deleted after the retention, like relayed media. */
  async keepUpload(key: string): Promise<void> {
    this.#store.keepKey(key, Date.now());
    await this.#armAlarm(Date.now() + RELAY_MEDIA_RETENTION_MS + 60_000);
  }

  async bridgeState(platform: string): Promise<BridgeState> {
    return this.#bridgeSide.state(platform, this.#gatewayId());
  }

  /** The UUID a bridged number was last seen with (Signal), or null. */
  async bridgedUuidOf(number: string): Promise<string | null> {
    return this.#bridge.uuidOf(number);
  }

  /**
   * The gateway stopped a session itself: cancel any turn the edge runs for that key. Only
   * keys of the platforms this gateway serves: a gateway cannot stop anyone else's turns.
   */
  async #gatewayInterrupt(ws: WebSocket, sessionKey: string): Promise<void> {
    const platform = platformOfKey(sessionKey) ?? "";
    if (!isPlatformName(platform) || settings(this.env).platforms[platform].gateway !== this.#state(ws).gatewayId) return;
    const sessionId = await inbox(this.env, sessionKey).session();
    if (sessionId) await sessionAgent(this.env, sessionId).interrupt({ dropQueued: false });
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#store.setPartial(this.#state(ws).connId, "");
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#store.setPartial(this.#state(ws).connId, "");
  }

  /**
   * Takes in a platform message for the gateway: relayed once per delivery key (acknowledged
   * or not), stored, then sent at once if the gateway is live. A full buffer drops from the chat with the most frames waiting.
   */
  async deliver(input: { event: InboundEventIn; deliveryKey: string; media?: PendingMedia }): Promise<{ accepted: boolean; live: boolean }> {
    const now = Date.now();
    if (!this.#store.firstRelay(input.deliveryKey, now)) return { accepted: false, live: false };
    const bufferId = crypto.randomUUID();
    const frame = encodeFrame({ type: "inbound", event: input.event, bufferId });
    const limit = settings(this.env).relayBufferLimit;
    const pending = input.media && input.media.attachments.length > 0 ? JSON.stringify(input.media) : null;
    const dropped = this.#store.buffer(bufferId, input.deliveryKey, frame, now, limit, pending, input.event.session_key);
    if (dropped > 0) logger.child("relay").warn(`buffer full (${limit}), dropped ${dropped} frame(s) from the chat with the most waiting`);
    // Attachments are fetched after the webhook was answered; the frame (and what follows it) goes once they are kept.
    if (pending) void this.#fetchPending().catch((err: unknown) => logger.child("relay").error("fetching attachments failed; retrying", { err }));
    else await this.#flush();
    return { accepted: true, live: this.#live() !== null };
  }

  /** A platform /stop for a session the gateway runs (once per delivery); "offline" when it is away. */
  async interruptInbound(input: { deliveryKey: string; sessionKey: string; chatId: string }): Promise<"sent" | "offline" | "duplicate"> {
    if (!this.#store.firstRelay(input.deliveryKey, Date.now())) return "duplicate";
    const live = this.#live();
    return live && this.#send(live, { type: "interrupt_inbound", session_key: input.sessionKey, chat_id: input.chatId }) ? "sent" : "offline";
  }

  async status(): Promise<RelayStatus> {
    const live = this.#live();
    return {
      connected: live !== null,
      platforms: live ? this.#state(live).platforms : [],
      buffered: this.#store.buffered(),
      dropped: this.#store.dropped(),
      actionsWaiting: this.#bridge.waiting(),
    };
  }
}
