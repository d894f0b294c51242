import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ConnectionPorts } from "../../workers/platforms/connection.ts";
import { DiscordGatewayConnection, FIX_CHECK_MS } from "../../workers/platforms/discord/gateway/connection.ts";
import { FATAL_CLOSES, type GatewayMemory, RESUME_CLOSE } from "../../workers/platforms/discord/gateway/protocol.ts";
import { DiscordAdapter } from "../../workers/platforms/discord/index.ts";
import type { PlatformEvent } from "../../workers/platforms/types.ts";
import message from "../corpus/discord/gateway/message.json" with { type: "json" };
import { FakeDiscordGateway } from "../support/fake-discord-gateway.ts";
import { FakeDiscord } from "../support/fake-platforms.ts";
import { serve, type LoopbackServer } from "../support/http.ts";
import { DISCORD_TEST } from "../support/signing.ts";

/**
 * The Gateway connection against a fake Discord Gateway on loopback (real WebSocket frames)
 * and the REST fake, on a manual clock: the test moves time to when the connection asked
 * to be woken and wakes it; it waits on frames and deliveries, never on time.
 */

const T0 = Date.UTC(2026, 0, 1);
const msg = (id: string, content = "hi") => ({ ...message.payload.d, id, content });

/** A host for the connection: in-memory storage, deliveries kept, the clock and wake-ups in the test's hands. */
class Host {
  now = T0;
  wakeAt: number | null = null;
  readonly store = new Map<string, unknown>();
  readonly delivered: PlatformEvent[] = [];
  /** The next delivery fails (the Inbox could not be reached). */
  failNext = false;
  /** An evicted object: its late callbacks touch nothing. */
  dead = false;
  #waiters: Array<{ pred: () => boolean; resolve: () => void }> = [];

  ports(): ConnectionPorts {
    return {
      now: () => this.now,
      random: () => 0.5,
      fetch: (input, init) => fetch(input, init),
      open: (url, handlers) =>
        new Promise((resolve, reject) => {
          const ws = new WebSocket(url);
          let open = false;
          ws.onopen = () => {
            open = true;
            resolve({ send: (t) => ws.send(t), close: (code, reason) => ws.close(code, reason) });
          };
          ws.onerror = () => (open ? undefined : reject(new Error("could not connect")));
          ws.onmessage = (e) => handlers.message(String(e.data));
          ws.onclose = (e) => (open ? handlers.close(e.code, e.reason) : undefined);
        }),
      get: async <T>(key: string) => structuredClone(this.store.get(key)) as T | undefined,
      put: async (key, value) => {
        if (this.dead) return;
        this.store.set(key, structuredClone(value));
        this.#changed();
      },
      deliver: async (event) => {
        if (this.failNext) {
          this.failNext = false;
          throw new Error("the Inbox could not be reached");
        }
        this.delivered.push(event);
        this.#changed();
      },
      wakeAt: (at) => {
        if (!this.dead) this.wakeAt = at;
      },
    };
  }

  memory(): GatewayMemory | undefined {
    return this.store.get("gateway") as GatewayMemory | undefined;
  }

  until(pred: () => boolean): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }

  #changed(): void {
    for (const w of this.#waiters.filter((x) => x.pred())) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
  }
}

let gateway: FakeDiscordGateway;
const rest = new FakeDiscord();
let restServer: LoopbackServer;
let host: Host;

beforeAll(async () => {
  restServer = await serve((r) => rest.handle(r));
});
afterAll(async () => {
  await restServer.close();
});
afterEach(async () => {
  host.dead = true;
  await gateway.stop();
});

async function connect(): Promise<DiscordGatewayConnection> {
  gateway = await new FakeDiscordGateway().start();
  rest.reset();
  rest.gatewayUrl = gateway.url;
  host = new Host();
  const conn = new DiscordGatewayConnection({ botToken: DISCORD_TEST.botToken, apiBase: `${restServer.url}/api/v10` }, host.ports());
  await conn.wake();
  await host.until(() => host.memory()?.sessionId != null);
  return conn;
}

/** Moves the clock to the wake-up the connection asked for, and wakes it. */
async function advance(conn: DiscordGatewayConnection): Promise<void> {
  if (host.wakeAt === null) throw new Error("the connection asked for no wake-up");
  host.now = Math.max(host.now, host.wakeAt);
  await conn.wake();
}

describe("Discord Gateway connection against a fake Gateway", () => {
  it("HELLO → IDENTIFY → READY → MESSAGE_CREATE becomes a delivery, answered through the REST fake as a reply that pings nobody", async () => {
    const conn = await connect();
    expect(rest.called("/gateway/bot")).toHaveLength(1);
    expect(gateway.sent(2)[0]?.d).toMatchObject({ token: DISCORD_TEST.botToken, intents: 37377 });
    expect(await conn.status()).toMatchObject({ state: "connected", connected_since: T0, resumes: 0, problem: null });
    gateway.dispatch("MESSAGE_CREATE", msg("3001", "Supa Hot"));
    await host.until(() => host.delivered.length === 1);
    const [event] = host.delivered;
    expect(event).toMatchObject({ kind: "message", text: "Supa Hot", deliveryId: "3001" });
    const adapter = new DiscordAdapter({
      applicationId: DISCORD_TEST.applicationId,
      publicKey: "",
      botToken: DISCORD_TEST.botToken,
      apiBase: `${restServer.url}/api/v10`,
    });
    await adapter.show(event!.target, "Hello back", [], "final");
    const posted = rest.calls.find((c) => c.method === "POST" && c.path.endsWith(`/channels/${message.payload.d.channel_id}/messages`));
    expect(posted?.body).toEqual({
      content: "Hello back",
      allowed_mentions: { parse: [] },
      message_reference: { message_id: "3001", fail_if_not_exists: false },
    });
  });

  it("heartbeats on the manual clock: first at half an interval (jitter 0.5), ACK latency recorded; no ACK → zombie closed and resumed", async () => {
    const conn = await connect();
    expect(host.wakeAt).toBe(T0 + gateway.heartbeatInterval / 2);
    await advance(conn);
    await gateway.until(() => gateway.sent(1).length === 1);
    await host.until(() => host.memory()?.lastAckAt != null);
    expect(host.memory()).toMatchObject({ lastAckAt: T0 + gateway.heartbeatInterval / 2, latencyMs: 0 });
    gateway.ackHeartbeats = false;
    await advance(conn);
    await gateway.until(() => gateway.sent(1).length === 2);
    await advance(conn);
    await host.until(() => host.memory()?.lastCloseCode === RESUME_CLOSE);
    await advance(conn);
    await gateway.until(() => gateway.resumes === 1);
    expect(gateway.identifies).toBe(1);
  });

  it("a dropped socket resumes: the events sent while it was down are replayed, none delivered twice", async () => {
    const conn = await connect();
    gateway.dispatch("MESSAGE_CREATE", msg("3101", "one"));
    await host.until(() => host.delivered.length === 1);
    gateway.live()?.drop();
    await host.until(() => host.memory()?.lastCloseCode === 1006);
    expect((await conn.status()).state).toBe("connecting");
    gateway.dispatch("MESSAGE_CREATE", msg("3102", "two"));
    gateway.dispatch("MESSAGE_CREATE", msg("3103", "three"));
    await advance(conn);
    await host.until(() => host.delivered.length === 3);
    await host.until(() => host.memory()?.resumes === 1);
    expect(host.delivered.map((e) => e.messageId)).toEqual(["3101", "3102", "3103"]);
    expect(gateway.sent(6)[0]?.d).toMatchObject({ session_id: gateway.session()?.id, seq: 2 });
    expect(gateway.identifies).toBe(1);
    expect(await conn.status()).toMatchObject({ state: "connected", resumes: 1, last_close_code: 1006 });
  });

  it("INVALID_SESSION (d: false) identifies a new session, after Discord's wait and the identify spacing", async () => {
    const conn = await connect();
    gateway.live()?.send({ op: 9, d: false });
    await host.until(() => host.memory()?.sessionId === null);
    while (gateway.peers.length < 2) await advance(conn);
    await host.until(() => host.memory()?.sessionId === "session-2");
    expect(host.now - T0).toBeGreaterThanOrEqual(5_000);
    expect(gateway.resumes).toBe(0);
  });

  it("RECONNECT (op 7) reconnects at once and resumes", async () => {
    const conn = await connect();
    gateway.live()?.send({ op: 7, d: null });
    await host.until(() => host.memory()?.lastCloseCode === RESUME_CLOSE);
    expect(host.wakeAt).toBe(host.now);
    await advance(conn);
    await gateway.until(() => gateway.resumes === 1);
    expect(gateway.peers).toHaveLength(2);
  });

  it("close 4014 is reported with its fix and not retried; once the application's flags say the intent is on, it connects", async () => {
    gateway = await new FakeDiscordGateway().start();
    gateway.refuseIdentify = 4014;
    rest.reset();
    rest.gatewayUrl = gateway.url;
    rest.appFlags = 0;
    host = new Host();
    const conn = new DiscordGatewayConnection({ botToken: DISCORD_TEST.botToken, apiBase: `${restServer.url}/api/v10` }, host.ports());
    await conn.wake();
    await host.until(() => host.memory()?.stopped != null);
    expect(await conn.status()).toMatchObject({ state: "stopped", last_close_code: 4014, problem: FATAL_CLOSES[4014] });
    expect(FATAL_CLOSES[4014]?.fix).toMatch(/Message Content Intent/);
    // The alarm keeps waking it: it asks the REST API (at most every 5 minutes), never the Gateway.
    for (const later of [45_000, FIX_CHECK_MS, 2 * FIX_CHECK_MS, 86_400_000]) {
      host.now = T0 + later;
      await conn.wake();
    }
    expect(gateway.peers).toHaveLength(1);
    expect(gateway.identifies).toBe(1);
    expect(rest.called("/applications/@me")).toHaveLength(3);
    // The switch turned on in the portal: the next check sees it and connects.
    rest.appFlags = 1 << 19;
    gateway.refuseIdentify = null;
    host.now += FIX_CHECK_MS;
    await conn.wake();
    await host.until(() => host.memory()?.sessionId != null);
    expect(await conn.status()).toMatchObject({ state: "connected", problem: null });
  });

  it("close 4004 (a bad token) stops it; a new token (set as a secret, the object restarted) connects at once", async () => {
    gateway = await new FakeDiscordGateway().start();
    gateway.refuseIdentify = 4004;
    rest.reset();
    rest.gatewayUrl = gateway.url;
    host = new Host();
    const apiBase = `${restServer.url}/api/v10`;
    await new DiscordGatewayConnection({ botToken: "an-old-token", apiBase }, host.ports()).wake();
    await host.until(() => host.memory()?.stopped?.code === 4004);
    expect(JSON.stringify(host.memory())).not.toContain("an-old-token");
    gateway.refuseIdentify = null;
    const renewed = new DiscordGatewayConnection({ botToken: DISCORD_TEST.botToken, apiBase }, host.ports());
    await renewed.wake();
    await host.until(() => host.memory()?.sessionId != null);
    expect(host.memory()?.stopped).toBeNull();
  });

  it("with today's identifies spent (session_start_limit.remaining 0) it waits reset_after before opening a socket", async () => {
    gateway = await new FakeDiscordGateway().start();
    rest.reset();
    rest.gatewayUrl = gateway.url;
    rest.sessionStartsLeft = 0;
    host = new Host();
    const conn = new DiscordGatewayConnection({ botToken: DISCORD_TEST.botToken, apiBase: `${restServer.url}/api/v10` }, host.ports());
    await conn.wake();
    expect(gateway.peers).toHaveLength(0);
    expect(host.wakeAt).toBe(T0 + 60_000);
    rest.sessionStartsLeft = 999;
    await advance(conn);
    await host.until(() => host.memory()?.sessionId != null);
    expect(gateway.identifies).toBe(1);
  });

  it("an object evicted mid-session comes back and resumes from what it stored: the missed message once", async () => {
    await connect();
    gateway.dispatch("MESSAGE_CREATE", msg("3201", "before"));
    // Delivered and its sequence number stored (READY was 1).
    await host.until(() => host.memory()?.seq === 2);
    // Eviction: the instance is gone (its socket with it); a new one starts over the same storage.
    const old = host;
    old.dead = true;
    gateway.live()?.drop();
    await gateway.until(() => gateway.live() === null);
    gateway.dispatch("MESSAGE_CREATE", msg("3202", "while away"));
    host = new Host();
    for (const [k, v] of old.store) host.store.set(k, v);
    const back = new DiscordGatewayConnection({ botToken: DISCORD_TEST.botToken, apiBase: `${restServer.url}/api/v10` }, host.ports());
    await back.wake();
    await host.until(() => host.delivered.length === 1 && host.memory()?.resumes === 1);
    expect(host.delivered.map((e) => e.messageId)).toEqual(["3202"]);
    expect(gateway.identifies).toBe(1);
  });

  it("a message the intake could not take is not lost: the connection resumes and Discord sends it again", async () => {
    const conn = await connect();
    host.failNext = true;
    gateway.dispatch("MESSAGE_CREATE", msg("3301", "retry me"));
    await host.until(() => host.memory()?.lastCloseCode === RESUME_CLOSE);
    expect(host.delivered).toHaveLength(0);
    await advance(conn);
    await host.until(() => host.delivered.length === 1);
    expect(host.delivered[0]?.messageId).toBe("3301");
  });
});
