import { joinUrl } from "../../../agent/index.ts";
import { errorMessage, logger } from "../../../log/index.ts";
import { sha256Hex } from "../../../security.ts";
import type { ConnectionPorts, ConnectionSocket, ConnectionStatus, PlatformConnection } from "../../connection.ts";
import { PLATFORM_TIMEOUT_MS } from "../../types.ts";
import { messageContentIntent } from "../health.ts";
import { messageHeader, parseGatewayMessage } from "../parse-gateway.ts";
import { THREAD_TYPES } from "../parse.ts";
import { FATAL_CLOSES, type GatewayAction, type GatewayMemory, GatewayProtocol } from "./protocol.ts";

const log = logger.child("discord-gateway");

/** While stopped, how often Discord's REST API is asked whether the cause is gone (no IDENTIFY is spent on it). */
export const FIX_CHECK_MS = 5 * 60_000;

/** Storage keys: the protocol's memory, and what each channel is (`thread:<id>` → true/false). */
const MEMORY_KEY = "gateway";
const threadKey = (channelId: string) => `thread:${channelId}`;

export interface GatewaySettings {
  botToken: string;
  /** `DISCORD_API_BASE`: `GET {apiBase}/gateway/bot` gives the socket's URL (tests point it at a fake). */
  apiBase: string;
}

/** Where to connect, or how long Discord says to wait (the daily identify limit), or that the token is refused. */
type GatewayBot = { kind: "url"; url: string } | { kind: "wait"; ms: number } | { kind: "refused" };

/**
 * Discord's Gateway over a host's ports: carries out what {@link GatewayProtocol} says,
 * one thing at a time (frames, closes and wake-ups are queued), keeps the protocol's
 * memory durable after every frame (so an evicted object resumes), and turns messages
 * into deliveries. A message's sequence number is stored only after it was delivered: a
 * crash in between makes Discord replay it on resume, and the Inbox drops the double.
 */
export class DiscordGatewayConnection implements PlatformConnection {
  readonly #s: GatewaySettings;
  readonly #ports: ConnectionPorts;
  #protocol: GatewayProtocol | null = null;
  #socket: ConnectionSocket | null = null;
  /** Which socket is current: events of an older one are dropped. */
  #generation = 0;
  #queue: Promise<void> = Promise.resolve();
  /** A digest of the bot token (kept with a stop: a new token is a fix); never the token. */
  #digest: string | null = null;
  #lastFixCheck = Number.NEGATIVE_INFINITY;

  constructor(settings: GatewaySettings, ports: ConnectionPorts) {
    this.#s = settings;
    this.#ports = ports;
  }

  wake(): Promise<void> {
    return this.#serial(async (p) => {
      if (p.memory.stopped) await this.#checkFix(p);
      await this.#run(p.tick(this.#ports.now()));
    });
  }

  async status(): Promise<ConnectionStatus> {
    const p = await this.#load();
    const m = p.memory;
    const stopped = m.stopped ? (FATAL_CLOSES[m.stopped.code] ?? null) : null;
    return {
      state: stopped ? "stopped" : p.phase === "ready" ? "connected" : "connecting",
      connected_since: m.connectedSince,
      last_ack_at: m.lastAckAt,
      latency_ms: m.latencyMs,
      resumes: m.resumes,
      last_close_code: m.lastCloseCode,
      last_close_at: m.lastCloseAt,
      problem: stopped,
    };
  }

  async #load(): Promise<GatewayProtocol> {
    if (!this.#protocol) {
      this.#digest ??= await tokenDigest(this.#s.botToken);
      const memory = await this.#ports.get<GatewayMemory>(MEMORY_KEY);
      this.#protocol ??= new GatewayProtocol({ token: this.#s.botToken, random: () => this.#ports.random(), ...(memory ? { memory } : {}) });
    }
    return this.#protocol;
  }

  /** Runs `job` after everything queued before it; afterwards stores the memory and asks to be woken when something is due. */
  #serial(job: (p: GatewayProtocol) => Promise<void>): Promise<void> {
    const next = this.#queue.then(async () => {
      const p = await this.#load();
      try {
        await job(p);
      } catch (err) {
        log.error("gateway step failed", { err });
      }
      this.#ports.wakeAt(p.nextDeadline());
      await this.#ports.put(MEMORY_KEY, p.memory);
    });
    this.#queue = next.catch(() => undefined);
    return this.#queue;
  }

  async #run(actions: GatewayAction[]): Promise<void> {
    const p = await this.#load();
    for (const a of actions) {
      switch (a.type) {
        case "open":
          await this.#open(a.resumeUrl);
          break;
        case "send":
          this.#socket?.send(JSON.stringify(a.payload));
          break;
        case "close":
          this.#generation++;
          this.#socket?.close(a.code, a.reason);
          this.#socket = null;
          break;
        case "dispatch":
          try {
            await this.#dispatch(a.name, a.data);
          } catch (err) {
            log.error(`a ${a.name} could not be taken in: resuming so Discord sends it again`, { err });
            return this.#run(p.abandon(this.#ports.now(), "a dispatch could not be taken in"));
          }
          p.handled(a.seq);
          break;
        case "stopped":
          this.#lastFixCheck = this.#ports.now();
          log.error(`stopped: ${FATAL_CLOSES[a.code]?.problem ?? `close ${a.code}`}`);
          break;
      }
    }
  }

  async #open(resumeUrl: string | null): Promise<void> {
    const p = await this.#load();
    const now = () => this.#ports.now();
    let url = resumeUrl;
    if (!url) {
      const bot = await this.#gatewayBot();
      if (bot.kind === "refused") return this.#run(p.closed(4004, now(), this.#digest));
      if (bot.kind === "wait") return this.#run(p.openFailed(now(), bot.ms));
      url = bot.url;
    }
    const generation = ++this.#generation;
    // A late event of a socket given up is not this connection's business any more.
    const mine = (fn: (q: GatewayProtocol) => Promise<void>) => {
      void this.#serial(async (q) => (generation === this.#generation ? fn(q) : undefined));
    };
    try {
      this.#socket = await this.#ports.open(withQuery(url), {
        message: (text) => mine(async (q) => this.#run(q.frame(text, now()))),
        close: (code) =>
          mine(async (q) => {
            this.#socket = null;
            await this.#run(q.closed(code, now(), this.#digest));
          }),
      });
    } catch (err) {
      log.warn(`could not open the Gateway socket: ${errorMessage(err)}`);
      return this.#run(p.openFailed(now()));
    }
    await this.#run(p.opened(now()));
  }

  /**
   * A stopped connection's cause may be gone: a new bot token (4004, or any stop), the token
   * accepted again (4004), Message Content Intent on in the application's flags (4014).
   * Asked of the REST API at most every {@link FIX_CHECK_MS}; a fix connects at once.
   */
  async #checkFix(p: GatewayProtocol): Promise<void> {
    const stopped = p.memory.stopped;
    const now = this.#ports.now();
    if (!stopped) return;
    if (stopped.token !== this.#digest) return p.fixed(now);
    if (now < this.#lastFixCheck + FIX_CHECK_MS) return;
    this.#lastFixCheck = now;
    if (stopped.code === 4004 && (await this.#gatewayBot()).kind === "url") return p.fixed(now);
    if (stopped.code === 4014) {
      const flags = await this.#get<{ flags?: number }>("applications/@me");
      if (messageContentIntent(flags?.flags) === "on") {
        log.info("Message Content Intent is on now: connecting again");
        p.fixed(now);
      }
    }
  }

  /** A GET on the REST API with the bot token; null when it fails. */
  async #get<T>(path: string): Promise<T | null> {
    try {
      const res = await this.#ports.fetch(joinUrl(this.#s.apiBase, path), {
        headers: { authorization: `Bot ${this.#s.botToken}` },
        signal: AbortSignal.timeout(PLATFORM_TIMEOUT_MS),
      });
      return res.ok ? ((await res.json()) as T) : null;
    } catch (err) {
      log.warn(`GET ${path} failed: ${errorMessage(err)}`);
      return null;
    }
  }

  /** `GET /gateway/bot`: the URL, and whether today's identify budget is spent (`session_start_limit`). */
  async #gatewayBot(): Promise<GatewayBot> {
    try {
      const res = await this.#ports.fetch(joinUrl(this.#s.apiBase, "gateway/bot"), {
        headers: { authorization: `Bot ${this.#s.botToken}` },
        signal: AbortSignal.timeout(PLATFORM_TIMEOUT_MS),
      });
      if (res.status === 401) return { kind: "refused" };
      const body = (await res.json().catch(() => ({}))) as {
        url?: string;
        retry_after?: number;
        session_start_limit?: { remaining?: number; reset_after?: number };
      };
      if (res.status === 429) return { kind: "wait", ms: Math.ceil((body.retry_after ?? 5) * 1000) };
      if (!res.ok || typeof body.url !== "string") return { kind: "wait", ms: 5_000 };
      const limit = body.session_start_limit;
      if (limit && limit.remaining === 0) {
        log.warn("Discord's daily session start limit is used up: waiting for it to reset");
        return { kind: "wait", ms: Math.max(1_000, limit.reset_after ?? 60_000) };
      }
      return { kind: "url", url: body.url };
    } catch (err) {
      log.warn(`GET /gateway/bot failed: ${errorMessage(err)}`);
      return { kind: "wait", ms: 5_000 };
    }
  }

  async #dispatch(name: string, data: unknown): Promise<void> {
    if (name === "THREAD_CREATE" || name === "THREAD_UPDATE" || name === "CHANNEL_CREATE") return this.#learnChannel(data);
    if (name === "GUILD_CREATE") {
      for (const t of (data as { threads?: unknown[] } | null)?.threads ?? []) await this.#learnChannel(t);
      return;
    }
    if (name !== "MESSAGE_CREATE") return;
    const header = messageHeader(data);
    if (!header || header.fromBot) return;
    const p = await this.#load();
    const isThread = header.guildId !== null && (header.channelType !== null ? THREAD_TYPES.has(header.channelType) : await this.#isThread(header.channelId));
    const parsed = parseGatewayMessage(data, { botUserId: p.memory.botUserId, isThread });
    if (parsed.kind === "ignore") return;
    await this.#ports.deliver(parsed.event);
  }

  async #learnChannel(data: unknown): Promise<void> {
    const c = data as { id?: unknown; type?: unknown } | null;
    if (typeof c?.id === "string" && typeof c.type === "number") await this.#ports.put(threadKey(c.id), THREAD_TYPES.has(c.type));
  }

  /** Whether a server channel is a thread: learnt from THREAD_CREATE and GUILD_CREATE, else asked once (`GET /channels/{id}`). */
  async #isThread(channelId: string): Promise<boolean> {
    const known = await this.#ports.get<boolean>(threadKey(channelId));
    if (known !== undefined) return known;
    const channel = await this.#get<{ type?: number }>(`channels/${channelId}`);
    if (!channel) return false;
    const thread = typeof channel.type === "number" && THREAD_TYPES.has(channel.type);
    await this.#ports.put(threadKey(channelId), thread);
    return thread;
  }
}

/** A short SHA-256 digest of the bot token, to tell a new token from the one a stop was for. */
async function tokenDigest(token: string): Promise<string> {
  return (await sha256Hex(token)).slice(0, 16);
}

/** The Gateway URL with the version and encoding this connection speaks. */
function withQuery(url: string): string {
  const u = new URL(url);
  u.searchParams.set("v", "10");
  u.searchParams.set("encoding", "json");
  return u.toString();
}
