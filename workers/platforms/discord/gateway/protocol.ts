/**
 * Discord's Gateway protocol as a pure state machine: frames, socket events and clock ticks
 * go in, actions come out (send this, close that socket, open a new one, a dispatch to act
 * on). No sockets, timers or I/O here: the connection (`connection.ts`) carries the actions
 * out, and tests drive it with a manual clock.
 *
 * Protocol facts (API v10, JSON encoding), from https://discord.com/developers/docs/events/gateway
 * and https://discord.com/developers/docs/topics/opcodes-and-status-codes:
 * - HELLO (op 10) gives `heartbeat_interval`; the first heartbeat waits `interval * jitter`
 *   (jitter in [0, 1)), then one every interval. A heartbeat (op 1) carries the last
 *   sequence number; Discord answers HEARTBEAT_ACK (op 11). No ACK before the next beat is
 *   a zombie connection: close it with a code other than 1000/1001 and resume.
 * - Discord may ask for a heartbeat at once (op 1 from the server).
 * - IDENTIFY (op 2) starts a session; READY gives `session_id` and `resume_gateway_url`.
 *   RESUME (op 6) with `session_id` and the last `seq` replays what was missed, then RESUMED.
 * - RECONNECT (op 7): reconnect and resume. INVALID_SESSION (op 9): `d: true` may resume,
 *   `d: false` must identify again; both after a random 1–5 s.
 * - Close codes 4004 (authentication failed), 4010–4014 (shard, version, intents) cannot be
 *   fixed by reconnecting; 4007 (invalid seq) and 4009 (session timed out) need a new session.
 */

export const OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

/** Gateway intents by bit (https://discord.com/developers/docs/events/gateway#list-of-intents). */
export const INTENT_BITS = { GUILDS: 0, GUILD_MESSAGES: 9, DIRECT_MESSAGES: 12, MESSAGE_CONTENT: 15 } as const;

/** What the bot asks for: servers (threads), messages in servers and DMs, and their text (privileged). */
export const GATEWAY_INTENTS = Object.values(INTENT_BITS).reduce((sum: number, bit) => sum | (1 << bit), 0);

/** Close codes after which reconnecting cannot help: stop, and say what to fix. */
export const FATAL_CLOSES: Record<number, { problem: string; fix: string }> = {
  4004: {
    problem: "Discord closed the Gateway with 4004 (authentication failed): the bot token is wrong or was reset",
    fix: "copy the bot token from the developer portal (Bot → Reset Token) and run npx wrangler secret put DISCORD_BOT_TOKEN (a new token connects)",
  },
  4010: { problem: "Discord closed the Gateway with 4010 (invalid shard)", fix: "report this: the bot does not shard" },
  4011: {
    problem: "Discord closed the Gateway with 4011 (sharding required: the bot is in more than 2,500 servers)",
    fix: "DISCORD_GATEWAY=on serves one shard; turn it off (interactions keep working)",
  },
  4012: { problem: "Discord closed the Gateway with 4012 (invalid API version)", fix: "set DISCORD_API_BASE to https://discord.com/api/v10" },
  4013: { problem: "Discord closed the Gateway with 4013 (invalid intents)", fix: "report this: the intents the bot sends are fixed" },
  4014: {
    problem: "Discord closed the Gateway with 4014 (disallowed intents): Message Content Intent is not enabled for this bot",
    fix: "developer portal → your application → Bot → Privileged Gateway Intents: turn on Message Content Intent (the Worker sees the switch within 5 minutes and connects)",
  },
};

/** Close codes after which the session cannot be resumed (identify again). */
const NEW_SESSION_CLOSES = new Set([4007, 4009]);

/** Discord allows one IDENTIFY per 5 s (per `max_concurrency` bucket). */
export const IDENTIFY_SPACING_MS = 5_000;
/** A socket that has not said HELLO (or finished the handshake) by then is given up. */
export const HANDSHAKE_TIMEOUT_MS = 30_000;
/** Reconnect backoff: 1 s doubling to 60 s, jittered; reset by READY or RESUMED. */
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 60_000;
/** Failed openings in a row after which the session's resume URL is given up. */
const RESUME_ATTEMPTS = 6;
/** Our own close when we give a connection up but keep its session (anything but 1000/1001). */
export const RESUME_CLOSE = 4900;

/** What survives the object: enough to resume, and what status shows. */
export interface GatewayMemory {
  sessionId: string | null;
  seq: number | null;
  resumeUrl: string | null;
  botUserId: string | null;
  connectedSince: number | null;
  lastAckAt: number | null;
  latencyMs: number | null;
  resumes: number;
  identifies: number;
  lastCloseCode: number | null;
  lastCloseAt: number | null;
  lastIdentifyAt: number | null;
  /**
   * A fatal close: no reconnecting (no IDENTIFY is spent) until `fixed()` says the cause is
   * gone; `token` is a digest of the bot token it stopped with (a new token is a fix).
   */
  stopped: { code: number; at: number; token: string | null } | null;
}

export const EMPTY_MEMORY: GatewayMemory = {
  sessionId: null,
  seq: null,
  resumeUrl: null,
  botUserId: null,
  connectedSince: null,
  lastAckAt: null,
  latencyMs: null,
  resumes: 0,
  identifies: 0,
  lastCloseCode: null,
  lastCloseAt: null,
  lastIdentifyAt: null,
  stopped: null,
};

export type GatewayAction =
  /** Open a socket: to `resumeUrl` to resume, else ask `GET /gateway/bot` for the URL. */
  | { type: "open"; resumeUrl: string | null }
  | { type: "send"; payload: Record<string, unknown> }
  /** Close the current socket (its close event is then not ours to handle). */
  | { type: "close"; code: number; reason: string }
  /** A dispatch (op 0) to act on: READY, MESSAGE_CREATE, THREAD_CREATE, …; call `handled(seq)` once it is. */
  | { type: "dispatch"; name: string; data: unknown; seq: number | null }
  /** Stopped for good (a fatal close code): report it. */
  | { type: "stopped"; code: number };

type Phase = "idle" | "opening" | "handshake" | "ready";

interface Frame {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

function readFrame(text: string): Frame | null {
  try {
    const f = JSON.parse(text) as unknown;
    return f && typeof f === "object" && typeof (f as Frame).op === "number" ? (f as Frame) : null;
  } catch {
    return null;
  }
}

/**
 * One bot's Gateway connection, as state. Every method takes the time (`now`, epoch ms)
 * and returns what to do; `random()` (in [0, 1)) jitters the first heartbeat and waits.
 */
export class GatewayProtocol {
  memory: GatewayMemory;
  readonly #token: string;
  readonly #random: () => number;
  #phase: Phase = "idle";
  #phaseAt = 0;
  #interval: number | null = null;
  #nextBeatAt: number | null = null;
  /** When the unanswered heartbeat went out (null: the last one was ACKed). */
  #beatSentAt: number | null = null;
  #reconnectAt = 0;
  #failures = 0;

  constructor(opts: { token: string; random: () => number; memory?: GatewayMemory }) {
    this.#token = opts.token;
    this.#random = opts.random;
    // A new instance (an evicted object back) holds no socket yet, whatever was stored.
    this.memory = { ...EMPTY_MEMORY, ...opts.memory, connectedSince: null };
  }

  get phase(): Phase {
    return this.#phase;
  }

  /** When `tick` next has something to do (a heartbeat, a reconnect, a handshake timeout); null: nothing. */
  nextDeadline(): number | null {
    if (this.memory.stopped) return null;
    if (this.#phase === "idle") return this.#reconnectAt;
    if (this.#phase !== "ready") return this.#phaseAt + HANDSHAKE_TIMEOUT_MS;
    return this.#nextBeatAt;
  }

  /** Time passes: open a socket when one is due, beat, find a zombie, give up a stuck handshake. */
  tick(now: number): GatewayAction[] {
    const m = this.memory;
    if (m.stopped) return [];
    if (this.#phase === "idle") {
      if (now < this.#reconnectAt) return [];
      // A fresh session must respect the identify rate limit; a resume need not.
      const resume = this.#canResume();
      if (!resume && m.lastIdentifyAt !== null && now < m.lastIdentifyAt + IDENTIFY_SPACING_MS) {
        this.#reconnectAt = m.lastIdentifyAt + IDENTIFY_SPACING_MS;
        return [];
      }
      this.#enter("opening", now);
      return [{ type: "open", resumeUrl: resume ? m.resumeUrl : null }];
    }
    if (this.#phase !== "ready" && now >= this.#phaseAt + HANDSHAKE_TIMEOUT_MS) return this.#drop(now, "handshake timed out", true);
    if (this.#nextBeatAt !== null && this.#interval !== null && now >= this.#nextBeatAt) {
      // The last heartbeat was never acknowledged: the connection is a zombie.
      if (this.#beatSentAt !== null) return this.#drop(now, "no heartbeat ACK", true);
      this.#nextBeatAt = now + this.#interval;
      return [this.#beat(now)];
    }
    return [];
  }

  /** The socket is open (Discord speaks first, with HELLO). */
  opened(now: number): GatewayAction[] {
    this.#enter("handshake", now);
    return [];
  }

  /** Opening failed (network, `GET /gateway/bot` refused); `waitMs` when Discord said how long (the identify limit). */
  openFailed(now: number, waitMs?: number): GatewayAction[] {
    this.#enter("idle", now);
    this.#reconnectAt = now + (waitMs ?? this.#backoff());
    // A resume URL that keeps failing is given up: a fresh session from GET /gateway/bot.
    if (this.#failures >= RESUME_ATTEMPTS) this.#forget();
    return [];
  }

  /** One text frame from Discord. */
  frame(text: string, now: number): GatewayAction[] {
    const f = readFrame(text);
    if (!f) return [];
    const m = this.memory;
    switch (f.op) {
      case OP.HELLO: {
        const interval = Number((f.d as { heartbeat_interval?: unknown } | null)?.heartbeat_interval);
        if (!Number.isFinite(interval) || interval <= 0) return this.#drop(now, "HELLO without a heartbeat interval", true);
        this.#interval = interval;
        this.#nextBeatAt = now + Math.floor(interval * this.#random());
        this.#beatSentAt = null;
        if (this.#canResume()) {
          return [{ type: "send", payload: { op: OP.RESUME, d: { token: this.#token, session_id: m.sessionId, seq: m.seq } } }];
        }
        m.lastIdentifyAt = now;
        m.identifies++;
        return [{ type: "send", payload: this.#identify() }];
      }
      case OP.HEARTBEAT:
        return [this.#beat(now)];
      case OP.HEARTBEAT_ACK:
        if (this.#beatSentAt !== null) m.latencyMs = now - this.#beatSentAt;
        m.lastAckAt = now;
        this.#beatSentAt = null;
        return [];
      case OP.RECONNECT:
        return this.#drop(now, "Discord asked to reconnect", false, 0);
      case OP.INVALID_SESSION: {
        if (f.d !== true) this.#forget();
        // Discord asks for a random wait of 1–5 s before identifying or resuming again.
        return this.#drop(now, "invalid session", false, 1_000 + Math.floor(this.#random() * 4_000));
      }
      case OP.DISPATCH: {
        const name = f.t ?? "";
        if (name === "READY") {
          const d = (f.d ?? {}) as { session_id?: string; resume_gateway_url?: string; user?: { id?: string } };
          m.sessionId = d.session_id ?? null;
          m.resumeUrl = d.resume_gateway_url ?? null;
          m.botUserId = d.user?.id ?? m.botUserId;
          this.#connected(now);
        } else if (name === "RESUMED") {
          m.resumes++;
          this.#connected(now);
        }
        return [{ type: "dispatch", name, data: f.d ?? null, seq: typeof f.s === "number" ? f.s : null }];
      }
      default:
        return [];
    }
  }

  /**
   * A dispatch was acted on: its sequence number is what a resume (and each heartbeat)
   * names from now on. One not acted on is replayed by Discord after a resume.
   */
  handled(seq: number | null): void {
    if (seq !== null) this.memory.seq = seq;
  }

  /** A dispatch could not be acted on (the intake failed): give the socket up and resume, so Discord sends it again. */
  abandon(now: number, reason: string): GatewayAction[] {
    return this.#drop(now, reason, true);
  }

  /** The cause of a stop is gone (the intent is on now, the token works): connect again at once. */
  fixed(now: number): void {
    this.memory.stopped = null;
    this.#enter("idle", now);
    this.#reconnectAt = now;
  }

  /** Discord (or the network) closed the socket with `code`; `token`: a digest of the token in use, kept with a stop. */
  closed(code: number, now: number, token: string | null = null): GatewayAction[] {
    const m = this.memory;
    m.lastCloseCode = code;
    m.lastCloseAt = now;
    m.connectedSince = null;
    const fatal = FATAL_CLOSES[code];
    this.#enter("idle", now);
    if (fatal) {
      this.#forget();
      m.stopped = { code, at: now, token };
      return [{ type: "stopped", code }];
    }
    if (NEW_SESSION_CLOSES.has(code)) this.#forget();
    this.#reconnectAt = now + this.#backoff();
    return [];
  }

  #canResume(): boolean {
    const m = this.memory;
    return m.sessionId !== null && m.seq !== null && m.resumeUrl !== null;
  }

  #forget(): void {
    this.memory.sessionId = null;
    this.memory.seq = null;
    this.memory.resumeUrl = null;
  }

  #identify(): Record<string, unknown> {
    return {
      op: OP.IDENTIFY,
      d: { token: this.#token, intents: GATEWAY_INTENTS, properties: { os: "cloudflare-workers", browser: "hermes-edge", device: "hermes-edge" } },
    };
  }

  #beat(now: number): GatewayAction {
    this.#beatSentAt ??= now;
    return { type: "send", payload: { op: OP.HEARTBEAT, d: this.memory.seq } };
  }

  #connected(now: number): void {
    this.#enter("ready", now);
    this.memory.connectedSince = now;
    this.memory.stopped = null;
    this.#failures = 0;
  }

  #enter(phase: Phase, now: number): void {
    this.#phase = phase;
    this.#phaseAt = now;
    if (phase === "idle" || phase === "opening") {
      this.#interval = null;
      this.#nextBeatAt = null;
      this.#beatSentAt = null;
    }
  }

  #backoff(): number {
    const base = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** this.#failures);
    this.#failures++;
    return Math.floor(base / 2 + (base / 2) * this.#random());
  }

  /** Gives the socket up ourselves (a zombie, RECONNECT, INVALID_SESSION), keeping the session when it may resume. */
  #drop(now: number, reason: string, backoff: boolean, waitMs?: number): GatewayAction[] {
    const m = this.memory;
    m.lastCloseCode = RESUME_CLOSE;
    m.lastCloseAt = now;
    m.connectedSince = null;
    this.#enter("idle", now);
    this.#reconnectAt = now + (waitMs ?? (backoff ? this.#backoff() : 0));
    return [{ type: "close", code: RESUME_CLOSE, reason }];
  }
}
