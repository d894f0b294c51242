import type { Clock } from "../../workers/runtime/index.ts";
import { CLOSE, Descriptor, FrameDecoder, encodeFrame, type GatewayFrameIn } from "../../workers/relay/frames.ts";
import { mintRelayToken } from "../../workers/relay/token.ts";
import { Backoff } from "./backoff.ts";
import { errorMessage } from "../../workers/log/index.ts";

/** Lifetime of the token minted for each dial. */
export const TOKEN_TTL_S = 300;
/** How often a handshaked socket sends `{"type":"ping"}` (the connector answers without waking). */
export const PING_INTERVAL_MS = 10_000;

const OPEN = 1;

/**
 * The part of a WebSocket the gateway uses. Event payloads are reduced to plain objects,
 * so an in-memory fake implements it directly; {@link nodeWebSocket} adapts the real one.
 */
export interface RelaySocket {
  /** 0 connecting, 1 open, 2 closing, 3 closed (the WebSocket constants). */
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: (() => void) | null;
  onmessage: ((event: { data: string }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: { message: string }) => void) | null;
}

/** Opens a socket to `url` with the given upgrade request headers. */
export type SocketFactory = (url: string, init: { headers: Record<string, string> }) => RelaySocket;

/** Node 22's global WebSocket (undici), which accepts request headers. */
export const nodeWebSocket: SocketFactory = (url, init) => {
  const ws = new WebSocket(url, { headers: init.headers });
  ws.binaryType = "arraybuffer";
  const decoder = new TextDecoder();
  const socket: RelaySocket = {
    get readyState() {
      return ws.readyState;
    },
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
  };
  let opened = false;
  let closed = false;
  const closeOnce = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    socket.onclose?.({ code, reason });
  };
  ws.onopen = () => {
    opened = true;
    socket.onopen?.();
  };
  ws.onmessage = (ev) => {
    const data: unknown = ev.data;
    const text = typeof data === "string" ? data : data instanceof ArrayBuffer ? decoder.decode(data) : null;
    if (text !== null) socket.onmessage?.({ data: text });
  };
  ws.onclose = (ev) => closeOnce(ev.code, ev.reason);
  ws.onerror = (ev) => {
    const message = (ev as { message?: unknown }).message;
    socket.onerror?.({ message: typeof message === "string" && message ? message : "connection error" });
    // Node 22's WebSocket fires only `error` for a failed handshake (refused, non-101)
    // and stays CONNECTING; without this close the gateway would never re-dial.
    if (!opened) closeOnce(1006, "");
  };
  return socket;
};

/** What the status line shows. */
export type RelayStatus =
  | { state: "connecting" }
  | { state: "connected"; platforms: string[] }
  | { state: "reconnecting"; inMs: number; reason: string }
  | { state: "disabled" };

/** Why the client stopped for good. A replaced gateway does not stop: it keeps retrying. */
export type RelayEnd = "stopped" | "disabled";

/** What to check when the connector refuses this gateway's credentials (4401). */
export const REFUSED_HINT =
  "the Worker refused this gateway's credentials (4401): check that GATEWAY_RELAY_ID and GATEWAY_RELAY_SECRET match an <id>:<secret> pair in the Worker's RELAY_SECRETS (deployed: npx wrangler secret put RELAY_SECRETS), and that this machine's clock is right";

/** A frame from the connector, already split from its line. */
export type IncomingFrame = Record<string, unknown> & { type: string };

export interface RelayClientOptions {
  /** The normalised `ws(s)://…/relay` URL. */
  url: string;
  gatewayId: string;
  secret: string;
  platforms: readonly string[];
  socket: SocketFactory;
  clock: Clock;
  random?: () => number;
  mintToken?: (gatewayId: string, secret: string, exp: number) => Promise<string>;
  /** Every decoded frame, after the client's own handling (handshake, errors). */
  onFrame: (frame: IncomingFrame) => void;
  /** The socket went away (results still pending on it will never arrive). */
  onDisconnect?: () => void;
  onStatus: (status: RelayStatus) => void;
  log: (line: string) => void;
}

function describeClose(code: number, reason: string): string {
  if (code === CLOSE.unauthorized)
    return reason === "expired" ? "token expired (4401)" : reason === "replayed" ? "token already used (4401 replayed)" : "credentials refused (4401)";
  if (code === CLOSE.replaced)
    return reason === "busy" ? "another connection of this gateway is live (4409 busy)" : "another connection of this gateway took over (4409 replaced)";
  if (code === CLOSE.tooBig) return "frame too large (1009)";
  if (code === 1006) return "connection lost (1006)";
  return reason ? `closed ${code}: ${reason}` : `closed ${code}`;
}

/**
 * The gateway's one outbound connection to the connector: dials with a fresh token, says
 * hello per platform, decodes frames, and re-dials after failures per the contract's
 * ladder (jittered backoff; 4401 handling; 4409 gives up to the newer socket).
 */
export class RelayClient {
  readonly #o: RelayClientOptions;
  readonly #backoff: Backoff;
  readonly #mint: NonNullable<RelayClientOptions["mintToken"]>;
  readonly #descriptors = new Map<string, Descriptor>();
  #socket: RelaySocket | null = null;
  #decoder = new FrameDecoder();
  #lastError: string | null = null;
  #handshaked = false;
  #everHandshaked = false;
  /** This dial is the one immediate re-dial after a post-handshake 4401. */
  #authRedial = false;
  /** Whether the "credentials refused" hint was logged (once per run). */
  #refusalExplained = false;
  #timer: unknown = null;
  #pingTimer: unknown = null;
  /** The expiry of the last token minted: each dial's token is distinct (the connector takes a token once). */
  #lastExp = 0;
  #end: RelayEnd | null = null;
  #waiters: Array<(connected: boolean) => void> = [];
  #resolveEnded!: (end: RelayEnd) => void;
  /** Resolves once the client stopped for good. */
  readonly ended: Promise<RelayEnd>;

  constructor(opts: RelayClientOptions) {
    this.#o = opts;
    this.#backoff = new Backoff(opts.random ? { random: opts.random } : {});
    this.#mint = opts.mintToken ?? mintRelayToken;
    this.ended = new Promise((resolve) => (this.#resolveEnded = resolve));
  }

  /** Handshaked on a live socket: frames other than hello may be sent. */
  get connected(): boolean {
    return this.#handshaked && this.#socket?.readyState === OPEN;
  }

  /** The descriptor the connector gave for `platform` (kept across reconnects). */
  descriptor(platform: string): Descriptor | undefined {
    return this.#descriptors.get(platform);
  }

  start(): void {
    void this.#dial();
  }

  /** Sends a frame on the live, handshaked socket; false when there is none. */
  send(frame: GatewayFrameIn): boolean {
    if (!this.connected || !this.#socket) return false;
    this.#socket.send(encodeFrame(frame));
    return true;
  }

  /** Resolves true once connected (at once if it is), false if the client stops first. */
  whenConnected(): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    if (this.#end) return Promise.resolve(false);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Stops for good: no more dials; the live socket is closed with 1000. */
  stop(): void {
    const socket = this.#socket;
    this.#finish("stopped");
    socket?.close(1000, "gateway stopping");
  }

  #finish(end: RelayEnd): void {
    if (this.#end) return;
    this.#end = end;
    if (this.#timer !== null) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#stopPing();
    this.#socket = null;
    this.#handshaked = false;
    for (const w of this.#waiters.splice(0)) w(false);
    this.#resolveEnded(end);
  }

  async #dial(): Promise<void> {
    this.#timer = null;
    if (this.#end) return;
    this.#o.onStatus({ state: "connecting" });
    const exp = Math.max(Math.floor(this.#o.clock.now() / 1000) + TOKEN_TTL_S, this.#lastExp + 1);
    this.#lastExp = exp;
    let socket: RelaySocket;
    try {
      const token = await this.#mint(this.#o.gatewayId, this.#o.secret, exp);
      if (this.#end) return;
      socket = this.#o.socket(this.#o.url, { headers: { authorization: `Bearer ${token}` } });
    } catch (err) {
      this.#lastError = errorMessage(err);
      this.#afterClose(1006, "");
      return;
    }
    this.#socket = socket;
    this.#decoder = new FrameDecoder();
    this.#lastError = null;
    socket.onopen = () => {
      if (socket !== this.#socket) return;
      for (const platform of this.#o.platforms) socket.send(encodeFrame({ type: "hello", platform, botId: "" }));
    };
    socket.onmessage = (ev) => {
      if (socket === this.#socket) this.#receive(socket, ev.data);
    };
    socket.onerror = (ev) => {
      if (socket === this.#socket) this.#lastError = ev.message;
    };
    socket.onclose = (ev) => {
      if (socket !== this.#socket) return;
      this.#socket = null;
      this.#afterClose(ev.code, ev.reason);
    };
  }

  #receive(socket: RelaySocket, data: string): void {
    const out = this.#decoder.push(data);
    if (out.skipped > 0) this.#o.log(`relay: skipped ${out.skipped} malformed line${out.skipped === 1 ? "" : "s"}`);
    for (const frame of out.frames) {
      if (frame.type === "descriptor") this.#onDescriptor(frame.descriptor);
      else if (frame.type === "error") this.#o.log(`relay error ${String(frame.code)}: ${String(frame.message)}`);
      this.#o.onFrame(frame);
      if (socket !== this.#socket) return; // a handler stopped the client
    }
    // 1009 is the connector's code; a WebSocket client may only close with 1000 or 3000-4999.
    if (out.tooBig) socket.close(1000, "frame too large");
  }

  #onDescriptor(value: unknown): void {
    const parsed = Descriptor.safeParse(value);
    if (!parsed.success) {
      this.#o.log("relay: a descriptor that does not match the contract was skipped");
      return;
    }
    const d = parsed.data;
    this.#descriptors.set(d.platform, d);
    if (this.#handshaked) return;
    this.#handshaked = true;
    this.#everHandshaked = true;
    this.#authRedial = false;
    this.#backoff.up(this.#o.clock.now());
    this.#startPing();
    this.#o.onStatus({ state: "connected", platforms: [...this.#o.platforms] });
    for (const w of this.#waiters.splice(0)) w(true);
  }

  /** Keepalive: the connector keeps a socket that shows signs of life, and refuses newcomers meanwhile. */
  #startPing(): void {
    this.#stopPing();
    const tick = () => {
      const socket = this.#socket;
      if (!socket || socket.readyState !== OPEN) return;
      socket.send(encodeFrame({ type: "ping" }));
      this.#pingTimer = this.#o.clock.setTimeout(tick, PING_INTERVAL_MS);
    };
    this.#pingTimer = this.#o.clock.setTimeout(tick, PING_INTERVAL_MS);
  }

  #stopPing(): void {
    if (this.#pingTimer !== null) this.#o.clock.clearTimeout(this.#pingTimer);
    this.#pingTimer = null;
  }

  #afterClose(code: number, reason: string): void {
    this.#handshaked = false;
    this.#stopPing();
    this.#backoff.down(this.#o.clock.now());
    this.#o.onDisconnect?.();
    if (this.#end) return;
    if (code === CLOSE.replaced) {
      // Loud, and never final: exiting would hand the gateway's traffic to whoever holds
      // the other connection (a token thief, say). Two gateways sharing an id keep
      // knocking, which an operator sees in both logs.
      this.#o.log(
        `relay: WARNING ${describeClose(code, reason)}; if this is not another copy of this gateway, its credentials may be in someone else's hands: rotate GATEWAY_RELAY_SECRET. Retrying.`,
      );
    }
    if (code === CLOSE.unauthorized && reason === "replayed") {
      this.#o.log("relay: WARNING the connector had already seen this dial's token (4401 replayed); someone may have captured it. Retrying with a fresh one.");
    }
    if (code === CLOSE.unauthorized && reason !== "expired" && reason !== "replayed" && this.#everHandshaked) {
      // These credentials worked before: one immediate re-dial tells a transient refusal
      // (a deploy, a rotated secret) from a revoked gateway.
      if (this.#authRedial) {
        this.#o.onStatus({ state: "disabled" });
        return this.#finish("disabled");
      }
      this.#authRedial = true;
      this.#o.log("relay: credentials refused (4401) after a handshake; re-dialling once with a fresh token");
      void this.#dial();
      return;
    }
    this.#authRedial = false;
    if (code === CLOSE.unauthorized && reason !== "expired" && reason !== "replayed" && !this.#refusalExplained) {
      // Before any handshake the contract retries (a secret may still be deploying), but the
      // operator is told once what to check rather than watching retries with no hint.
      this.#refusalExplained = true;
      this.#o.log(`relay: ${REFUSED_HINT}; retrying with backoff meanwhile (Ctrl-C stops)`);
    }
    const why = this.#lastError && code === 1006 ? `${this.#lastError}` : describeClose(code, reason);
    const inMs = this.#backoff.next();
    this.#o.onStatus({ state: "reconnecting", inMs, reason: why });
    this.#timer = this.#o.clock.setTimeout(() => void this.#dial(), inMs);
  }
}
