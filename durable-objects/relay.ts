import { DurableObject } from "cloudflare:workers";
import { isPlatformName, setting } from "../workers/config.ts";
import { db } from "../workers/db/client.ts";
import { routeFor } from "../workers/db/routes.ts";
import { adapterFor } from "../workers/platforms/registry.ts";
import { PlatformApiError, type ReplyTarget } from "../workers/platforms/types.ts";
import { gatewayFor } from "../workers/relay/config.ts";
import { descriptorFor } from "../workers/relay/descriptor.ts";
import { CLOSE, encodeFrame, FrameDecoder, type ConnectorFrame, type InboundEvent, type OutboundAction, type OutboundResult } from "../workers/relay/frames.ts";
import { GATEWAY_HEADER, REFUSAL_REASONS, refuseSocket, TOKEN_HEADER } from "../workers/relay/socket.ts";

/** Frames kept for a gateway that is away; past this the oldest are dropped (and counted). */
export const RELAY_BUFFER_LIMIT = 10_000;

function bufferLimit(env: Env): number {
  const n = Number(setting(env.RELAY_BUFFER_LIMIT));
  return Number.isInteger(n) && n > 0 ? n : RELAY_BUFFER_LIMIT;
}
/**
 * A live socket that has shown a sign of life (a frame, or a `{"type":"ping"}` answered by
 * the runtime) within this long keeps its place: a newcomer is refused with 4409 instead
 * of evicting it. Gateways ping every 10 s.
 */
export const LIVENESS_MS = 30_000;
/** Relayed deliveries are remembered this long, so a redelivery after the ack is not relayed again. */
export const RELAYED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

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
}

/** What the status route shows for a gateway. */
export interface RelayStatus {
  connected: boolean;
  platforms: string[];
  buffered: number;
  dropped: number;
}

/**
 * One per gateway id: holds the gateway's WebSocket (hibernation API), keeps inbound
 * frames for it durably until acknowledged, replays them in order on every handshake,
 * and runs its outbound actions through the platform adapters.
 */
export class Relay extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS buffer (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        buffer_id TEXT NOT NULL UNIQUE,
        delivery_key TEXT UNIQUE,
        frame TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`);
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS partials (conn_id TEXT PRIMARY KEY, data TEXT NOT NULL)");
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
      // Tokens accepted once, kept until they expire (single use).
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS used_tokens (sig TEXT PRIMARY KEY, exp INTEGER NOT NULL)");
      // Platform deliveries relayed (acknowledged or not), for dedupe of late redeliveries.
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS relayed (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL)");
      ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS relayed_at ON relayed (at)");
    });
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
    const gatewayId = request.headers.get(GATEWAY_HEADER);
    const token = /^(\d+):([0-9a-f]{64})$/.exec(request.headers.get(TOKEN_HEADER) ?? "");
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket" || !gatewayId || !token) return new Response("expected a websocket upgrade", { status: 426 });
    const now = Date.now();
    this.ctx.storage.sql.exec("DELETE FROM used_tokens WHERE exp < ?", Math.floor(now / 1000));
    const fresh = this.ctx.storage.sql.exec("INSERT INTO used_tokens (sig, exp) VALUES (?, ?) ON CONFLICT(sig) DO NOTHING RETURNING sig", token[2]!, Number(token[1])).toArray();
    if (fresh.length === 0) {
      console.warn(`relay ${gatewayId}: refused a token that was already used`);
      return refuseSocket(CLOSE.unauthorized, REFUSAL_REASONS.replayed);
    }
    const live = this.#live();
    if (live && now - this.#lastSign(live) < LIVENESS_MS) {
      console.warn(`relay ${gatewayId}: refused a second connection while the current one is live`);
      return refuseSocket(CLOSE.replaced, "busy");
    }
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    const state: SocketState = { connId: crypto.randomUUID(), gatewayId, connectedAt: now, handshakeAt: 0, idle: false, platforms: [], lastFrameAt: now };
    server.serializeAttachment(state);
    return new Response(null, { status: 101, webSocket: client });
  }

  #state(ws: WebSocket): SocketState {
    return ws.deserializeAttachment() as SocketState;
  }

  #setState(ws: WebSocket, state: SocketState): void {
    ws.serializeAttachment(state);
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

  /** The last sign of life of a socket: its last frame or the last ping the runtime answered. */
  #lastSign(ws: WebSocket): number {
    const pinged = this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
    return Math.max(pinged, this.#state(ws).lastFrameAt ?? 0);
  }

  #send(ws: WebSocket, frame: ConnectorFrame): boolean {
    try {
      ws.send(encodeFrame(frame));
      return true;
    } catch {
      return false;
    }
  }

  #counter(name: string): number {
    const row = this.ctx.storage.sql.exec("SELECT value FROM counters WHERE name = ?", name).toArray()[0];
    return row ? Number(row.value) : 0;
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const s = { ...this.#state(ws), lastFrameAt: Date.now() };
    this.#setState(ws, s);
    const text = typeof message === "string" ? message : new TextDecoder().decode(message);
    const partial = this.ctx.storage.sql.exec("SELECT data FROM partials WHERE conn_id = ?", s.connId).toArray()[0];
    const decoder = new FrameDecoder(partial ? String(partial.data) : "");
    const decoded = decoder.push(text);
    if (decoded.tooBig) {
      this.ctx.storage.sql.exec("DELETE FROM partials WHERE conn_id = ?", s.connId);
      ws.close(CLOSE.tooBig, "frame too large");
      return;
    }
    // A frame split across messages survives this object hibernating in between.
    if (decoder.partial) this.ctx.storage.sql.exec("INSERT OR REPLACE INTO partials (conn_id, data) VALUES (?, ?)", s.connId, decoder.partial);
    else if (partial) this.ctx.storage.sql.exec("DELETE FROM partials WHERE conn_id = ?", s.connId);
    for (const frame of decoded.frames) await this.#handle(ws, frame);
  }

  async #handle(ws: WebSocket, frame: Record<string, unknown> & { type: string }): Promise<void> {
    switch (frame.type) {
      case "hello":
        return this.#hello(ws, String(frame.platform ?? ""));
      case "inbound_ack":
        this.ctx.storage.sql.exec("DELETE FROM buffer WHERE buffer_id = ?", String(frame.bufferId ?? ""));
        return;
      case "interrupt":
        return this.#gatewayInterrupt(ws, String(frame.session_key ?? ""));
      case "outbound":
        void this.#outbound(ws, frame as unknown as { requestId: string; action: OutboundAction; platform?: string });
        return;
      case "going_idle": {
        this.#setState(ws, { ...this.#state(ws), idle: true });
        this.#send(ws, { type: "going_idle_ack" });
        return;
      }
      default:
        return; // unknown types are ignored
    }
  }

  async #hello(ws: WebSocket, platform: string): Promise<void> {
    const s = this.#state(ws);
    if (!isPlatformName(platform) || gatewayFor(this.env, platform) !== s.gatewayId) {
      this.#send(ws, { type: "error", code: "platform_not_relayed", message: `${platform || "(none)"} is not relayed to gateway ${s.gatewayId} (RELAY_PLATFORMS)` });
      return;
    }
    const adapter = adapterFor(this.env, platform);
    if (!adapter) {
      this.#send(ws, { type: "error", code: "platform_not_configured", message: `${platform} has no credentials on the connector` });
      return;
    }
    const first = s.handshakeAt === 0 || s.idle;
    this.#setState(ws, { ...s, handshakeAt: first ? Date.now() : s.handshakeAt, idle: false, platforms: [...new Set([...s.platforms, platform])] });
    this.#send(ws, { type: "descriptor", descriptor: descriptorFor(platform, adapter.capabilities) });
    if (first) {
      // The newest socket takes over; the older ones are closed so nothing goes out twice.
      for (const other of this.ctx.getWebSockets()) {
        if (other !== ws && this.#state(other).handshakeAt > 0) other.close(CLOSE.replaced, "replaced");
      }
      this.#replay(ws);
    }
  }

  /** Every unacknowledged frame, in order. Synchronous, so nothing new slips in between. */
  #replay(ws: WebSocket): void {
    for (const row of this.ctx.storage.sql.exec("SELECT frame FROM buffer ORDER BY seq").toArray()) {
      try {
        ws.send(String(row.frame));
      } catch {
        return;
      }
    }
  }

  /**
   * The gateway stopped a session itself: cancel any turn the edge runs for that key. Only
   * keys of the platforms this gateway serves: a gateway cannot stop anyone else's turns.
   */
  async #gatewayInterrupt(ws: WebSocket, sessionKey: string): Promise<void> {
    const platform = /^agent:[^:]+:([^:]+):/.exec(sessionKey)?.[1] ?? "";
    if (!isPlatformName(platform) || gatewayFor(this.env, platform) !== this.#state(ws).gatewayId) return;
    const sessionId = await routeFor(db(this.env), sessionKey);
    if (!sessionId) return;
    await this.env.SESSION_AGENT.get(this.env.SESSION_AGENT.idFromName(sessionId)).interrupt({ dropQueued: false });
  }

  async #outbound(ws: WebSocket, frame: { requestId: string; action: OutboundAction; platform?: string }): Promise<void> {
    const result = await this.#runOutbound(ws, frame).catch((err: unknown): OutboundResult => {
      if (err instanceof PlatformApiError) return { success: false, code: err.code, error: err.message };
      return { success: false, code: "internal", error: err instanceof Error ? err.message : String(err) };
    });
    this.#send(ws, { type: "outbound_result", requestId: String(frame.requestId ?? ""), result });
  }

  async #runOutbound(ws: WebSocket, frame: { action: OutboundAction; platform?: string }): Promise<OutboundResult> {
    const fronted = this.#state(ws).platforms;
    const platform = frame.platform ?? (fronted.length === 1 ? fronted[0] : undefined);
    if (!platform || !isPlatformName(platform) || !fronted.includes(platform)) {
      return { success: false, code: "unknown_platform", error: `outbound for ${platform ?? "an unnamed platform"}, which this gateway has not said hello for` };
    }
    const adapter = adapterFor(this.env, platform);
    if (!adapter) return { success: false, code: "platform_not_configured", error: `${platform} has no credentials on the connector` };
    const a = frame.action;
    if (typeof a?.chat_id !== "string" || a.chat_id === "") return { success: false, code: "bad_action", error: "action.chat_id is required" };
    const { target } = await adapter.sourceFor(a.chat_id, a.thread_id ?? null);
    const to: ReplyTarget = { ...target, replyTo: a.reply_to ?? null };
    switch (a.op) {
      case "send": {
        const sent = await adapter.send(to, String(a.content ?? ""));
        return { success: true, message_id: sent.messageId };
      }
      case "edit":
        if (!a.message_id) return { success: false, code: "bad_action", error: "edit needs action.message_id" };
        await adapter.edit(to, a.message_id, String(a.content ?? ""));
        return { success: true };
      case "typing":
        await adapter.typing?.(to);
        return { success: true };
      case "thread_create": {
        const thread = await adapter.createHandoffThread(a.chat_id, String(a.thread_name ?? "thread").slice(0, 100));
        // chat_id too: on Discord a thread is a channel of its own.
        return thread ? { success: true, thread_id: thread.threadId, chat_id: thread.chatId } : { success: false, code: "threads_unavailable", error: `no thread could be made in ${a.chat_id}` };
      }
      default:
        return { success: false, code: "unsupported_op", error: `op '${String(a.op)}' is not supported (send, edit, typing, thread_create)` };
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM partials WHERE conn_id = ?", this.#state(ws).connId);
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM partials WHERE conn_id = ?", this.#state(ws).connId);
  }

  /**
   * Takes in a platform message for the gateway: stored first (the same delivery key twice
   * is one frame), then sent at once if the gateway is live. A full buffer drops its oldest.
   */
  async deliver(input: { event: InboundEvent; deliveryKey: string }): Promise<{ accepted: boolean; bufferId: string | null; live: boolean }> {
    const now = Date.now();
    // Acknowledged deliveries leave the buffer but not this table: a platform's late
    // redelivery (the gateway may have lost its own record) is not relayed again.
    const first = this.ctx.storage.sql.exec("INSERT INTO relayed (delivery_key, at) VALUES (?, ?) ON CONFLICT(delivery_key) DO NOTHING RETURNING at", input.deliveryKey, now).toArray();
    if (first.length === 0) return { accepted: false, bufferId: null, live: false };
    this.ctx.storage.sql.exec("DELETE FROM relayed WHERE delivery_key IN (SELECT delivery_key FROM relayed WHERE at < ? LIMIT 100)", now - RELAYED_RETENTION_MS);
    const bufferId = crypto.randomUUID();
    const frame = encodeFrame({ type: "inbound", event: input.event, bufferId });
    const inserted = this.ctx.storage.sql
      .exec("INSERT INTO buffer (buffer_id, delivery_key, frame, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(delivery_key) DO NOTHING RETURNING seq", bufferId, input.deliveryKey, frame, Date.now())
      .toArray();
    if (inserted.length === 0) return { accepted: false, bufferId: null, live: false };
    const total = Number(this.ctx.storage.sql.exec("SELECT COUNT(*) AS n FROM buffer").one().n);
    const push = setting(this.env.RELAY_PUSH_URL);
    if (push && (await this.#push(push, frame, bufferId))) return { accepted: true, bufferId, live: true };
    const limit = bufferLimit(this.env);
    if (total > limit) {
      const excess = total - limit;
      this.ctx.storage.sql.exec("DELETE FROM buffer WHERE seq IN (SELECT seq FROM buffer ORDER BY seq LIMIT ?)", excess);
      this.ctx.storage.sql.exec("INSERT INTO counters (name, value) VALUES ('dropped', ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", excess);
      console.warn(`relay ${this.ctx.id.name ?? ""}: buffer full (${limit}), dropped the ${excess} oldest frame(s)`);
    }
    const live = this.#live();
    let sent = false;
    if (live) {
      try {
        live.send(frame);
        sent = true;
      } catch {
        // it closed just now: the frame waits for the next handshake
      }
    }
    return { accepted: true, bufferId, live: sent };
  }

  /**
   * The superseded design, kept only as the relay benchmark's baseline (RELAY_PUSH_URL):
   * POST the frame to an HTTP endpoint on the gateway; a 2xx counts as its ack.
   */
  async #push(url: string, frame: string, bufferId: string): Promise<boolean> {
    try {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body: frame });
      await res.body?.cancel();
      if (!res.ok) return false;
      this.ctx.storage.sql.exec("DELETE FROM buffer WHERE buffer_id = ?", bufferId);
      return true;
    } catch {
      return false;
    }
  }

  /** A platform /stop for a session the gateway runs; false when the gateway is away. */
  async interruptInbound(sessionKey: string, chatId: string): Promise<boolean> {
    const live = this.#live();
    return live ? this.#send(live, { type: "interrupt_inbound", session_key: sessionKey, chat_id: chatId }) : false;
  }

  async status(): Promise<RelayStatus> {
    const live = this.#live();
    return {
      connected: live !== null,
      platforms: live ? this.#state(live).platforms : [],
      buffered: Number(this.ctx.storage.sql.exec("SELECT COUNT(*) AS n FROM buffer").one().n),
      dropped: this.#counter("dropped"),
    };
  }
}
