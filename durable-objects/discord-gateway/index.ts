import { DurableObject } from "cloudflare:workers";
import { takeIn } from "../../workers/conversations/intake.ts";
import { logger } from "../../workers/log/index.ts";
import type { ConnectionPorts, ConnectionSocket, ConnectionStatus, PlatformConnection, SocketHandlers } from "../../workers/platforms/connection.ts";
import { adapterFor, gatewayConnection } from "../../workers/platforms/registry.ts";
import type { PlatformEvent } from "../../workers/platforms/types.ts";

const log = logger.child("discord-gateway");

/** How often the alarm looks at the connection and reopens it if the object was evicted (within the 30–60 s asked for). */
export const WATCH_MS = 45_000;

/** What the object says about itself: the connection's status, or `off` (`DISCORD_GATEWAY` is not on, or Discord is not enabled). */
export type GatewayObjectStatus = ConnectionStatus | { state: "off" };

/**
 * Opens a WebSocket client the way workerd does it: a fetch with `Upgrade: websocket`
 * (http(s) scheme), then `accept()`. Exactly one close reaches `handlers` (an error counts as 1006).
 */
async function openSocket(url: string, handlers: SocketHandlers): Promise<ConnectionSocket> {
  const res = await fetch(url.replace(/^ws(s?):/, "http$1:"), { headers: { Upgrade: "websocket" } });
  const ws = res.webSocket;
  if (!ws) throw new Error(`the Gateway answered HTTP ${res.status}, not a WebSocket`);
  ws.accept();
  let closed = false;
  const close = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    handlers.close(code, reason);
  };
  ws.addEventListener("message", (e) => {
    if (!closed) handlers.message(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data));
  });
  ws.addEventListener("close", (e) => close(e.code, e.reason));
  ws.addEventListener("error", () => close(1006, "socket error"));
  return {
    send: (text) => ws.send(text),
    close: (code, reason) => {
      closed = true;
      try {
        ws.close(code, reason);
      } catch {
        // Already closing: nothing left to close.
      }
    },
  };
}

/**
 * Discord's Gateway WebSocket, one per bot, with `DISCORD_GATEWAY=on`: a thin host for the
 * connection (`workers/platforms/discord/gateway/`), which it gives sockets, storage,
 * timers and the intake. Outbound sockets cannot hibernate: while connected the object
 * stays in memory (docs/platforms/discord.md says what that costs). An alarm every
 * {@link WATCH_MS} looks at it and reconnects (resuming the session) after an eviction or a
 * deploy; the cron calls `ensure()`, which re-arms the alarm if it was lost.
 */
export class DiscordGateway extends DurableObject<Env> {
  #connection: PlatformConnection | null | undefined;
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** Connects if it is not, and keeps the watch alarm armed. */
  async ensure(): Promise<GatewayObjectStatus> {
    const c = this.#conn();
    if (!c) {
      await this.ctx.storage.deleteAlarm();
      return { state: "off" };
    }
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + WATCH_MS);
    await c.wake();
    return c.status();
  }

  /** What `hermes-edge status` shows (no connecting: that is `ensure`'s). */
  async status(): Promise<GatewayObjectStatus> {
    const c = this.#conn();
    return c ? c.status() : { state: "off" };
  }

  override async alarm(): Promise<void> {
    const c = this.#conn();
    if (!c) return;
    await this.ctx.storage.setAlarm(Date.now() + WATCH_MS);
    await c.wake();
  }

  #conn(): PlatformConnection | null {
    if (this.#connection === undefined) this.#connection = gatewayConnection(this.env, this.#ports());
    return this.#connection;
  }

  #ports(): ConnectionPorts {
    const kv = this.ctx.storage.kv;
    return {
      now: () => Date.now(),
      random: () => Math.random(),
      fetch: (input, init) => fetch(input, init),
      open: openSocket,
      get: async <T>(key: string) => kv.get<T>(key),
      put: async (key, value) => kv.put(key, value),
      deliver: (event) => this.#deliver(event),
      wakeAt: (at) => this.#wakeAt(at),
    };
  }

  async #deliver(event: PlatformEvent): Promise<void> {
    const adapter = adapterFor(this.env, event.source.platform);
    if (!adapter) return;
    const result = await takeIn({ env: this.env, adapter, event, inline: false, waitUntil: (work) => this.ctx.waitUntil(work) });
    if (result.kind === "refused" || result.kind === "ignored")
      log.info(`message ${event.messageId}: ${result.kind} (${"code" in result ? result.code : result.reason})`);
  }

  #wakeAt(at: number | null): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (at === null) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        void this.#conn()?.wake();
      },
      Math.max(0, at - Date.now()),
    );
  }
}
