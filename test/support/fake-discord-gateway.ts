/**
 * A fake Discord Gateway on loopback: a WebSocket server (RFC 6455, written out here: no
 * dependency) that speaks the real opcodes. It says HELLO, answers IDENTIFY with READY and
 * RESUME with the missed dispatches then RESUMED, ACKs heartbeats, and lets a test send
 * dispatches, drop the socket, close it with a code, or send RECONNECT / INVALID_SESSION.
 * Payload shapes follow test/corpus/discord/gateway/ (Discord's documentation).
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** One frame the bot sent, parsed. */
export interface Received {
  op: number;
  d: unknown;
}

/** A connection from the bot. */
export class GatewayPeer {
  readonly received: Received[] = [];
  closed = false;
  #buffer = Buffer.alloc(0);
  readonly #socket: Socket;
  readonly #onFrame: (peer: GatewayPeer, f: Received) => void;

  constructor(socket: Socket, onFrame: (peer: GatewayPeer, f: Received) => void, onClose: (peer: GatewayPeer) => void) {
    this.#socket = socket;
    this.#onFrame = onFrame;
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
    socket.on("close", () => {
      this.closed = true;
      onClose(this);
    });
    // The HTTP server's sockets allow half-open connections: a bot that vanishes (kill -9) only
    // sends FIN, so the fake ends its side too, as a real server would.
    socket.on("end", () => socket.end());
    socket.on("error", () => undefined);
  }

  send(payload: unknown): void {
    if (!this.closed) this.#socket.write(frame(0x1, Buffer.from(JSON.stringify(payload))));
  }

  /** A close frame with `code`, then the socket ends (what Discord does with 4004, 4014…). */
  close(code: number, reason = ""): void {
    if (this.closed) return;
    const body = Buffer.alloc(2 + Buffer.byteLength(reason));
    body.writeUInt16BE(code, 0);
    body.write(reason, 2);
    this.#socket.write(frame(0x8, body));
    this.#socket.end();
  }

  /** The network fails: no close frame (the bot sees 1006). */
  drop(): void {
    this.#socket.destroy();
  }

  #read(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      if (this.#buffer.length < 2) return;
      const opcode = this.#buffer[0]! & 0x0f;
      const masked = (this.#buffer[1]! & 0x80) !== 0;
      let len = this.#buffer[1]! & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.#buffer.length < 4) return;
        len = this.#buffer.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.#buffer.length < 10) return;
        len = Number(this.#buffer.readBigUInt64BE(2));
        at = 10;
      }
      const mask = masked ? this.#buffer.subarray(at, at + 4) : null;
      if (masked) at += 4;
      if (this.#buffer.length < at + len) return;
      const payload = Buffer.from(this.#buffer.subarray(at, at + len));
      this.#buffer = this.#buffer.subarray(at + len);
      if (mask) for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
      if (opcode === 0x8) {
        this.#socket.end(frame(0x8, payload.subarray(0, 2)));
        continue;
      }
      if (opcode === 0x9) {
        this.#socket.write(frame(0xa, payload));
        continue;
      }
      if (opcode !== 0x1) continue;
      const f = JSON.parse(payload.toString("utf8")) as Received;
      this.received.push(f);
      this.#onFrame(this, f);
    }
  }
}

function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, len]) : Buffer.alloc(len < 65536 ? 4 : 10);
  if (len >= 126 && len < 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 126;
    head.writeUInt16BE(len, 2);
  } else if (len >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([head, payload]);
}

interface Session {
  id: string;
  /** Every dispatch of the session, with its sequence number (replayed on resume). */
  log: Array<{ s: number; t: string; d: unknown }>;
}

/** The Gateway: sessions, their dispatches, the live connection. */
export class FakeDiscordGateway {
  url = "";
  /** What HELLO says (Discord's is about 41 s; the docs' example says 45000). */
  heartbeatInterval = 45_000;
  /** Set false to stop ACKing heartbeats (a zombie connection). */
  ackHeartbeats = true;
  /** Close the next IDENTIFY with this code (4004 bad token, 4014 disallowed intents). */
  refuseIdentify: number | null = null;
  botUserId = "990000000000000001";
  readonly peers: GatewayPeer[] = [];
  readonly sessions = new Map<string, Session>();
  identifies = 0;
  resumes = 0;
  #server = createServer((_req, res) => res.writeHead(426).end());
  #waiters: Array<{ pred: () => boolean; resolve: () => void }> = [];
  #nextSession = 1;

  async start(): Promise<this> {
    this.#server.on("upgrade", (req: IncomingMessage, socket: Socket) => this.#upgrade(req, socket));
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const p of this.peers) p.drop();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The connection that is open now, if any. */
  live(): GatewayPeer | null {
    return this.peers.filter((p) => !p.closed).at(-1) ?? null;
  }

  /** The session the live (or last) connection identified or resumed. */
  session(): Session | null {
    return [...this.sessions.values()].at(-1) ?? null;
  }

  /**
   * A dispatch in the current session: numbered, logged (for replays), and sent if a
   * connection is up; with none, it waits in the log for the next RESUME, as Discord's do.
   */
  dispatch(t: string, d: unknown): number {
    const session = this.session();
    if (!session) throw new Error("no session: the bot has not identified");
    const s = (session.log.at(-1)?.s ?? 0) + 1;
    session.log.push({ s, t, d });
    this.live()?.send({ op: 0, s, t, d });
    return s;
  }

  /** Resolves once `pred` holds (checked after every frame and connection change). */
  until(pred: () => boolean): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }

  /** Frames of `op` the bot sent, on every connection. */
  sent(op: number): Received[] {
    return this.peers.flatMap((p) => p.received.filter((f) => f.op === op));
  }

  #changed(): void {
    for (const w of this.#waiters.filter((x) => x.pred())) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve();
    }
  }

  #upgrade(req: IncomingMessage, socket: Socket): void {
    const key = req.headers["sec-websocket-key"];
    if (typeof key !== "string") return void socket.destroy();
    const accept = createHash("sha1")
      .update(key + GUID)
      .digest("base64");
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    const peer = new GatewayPeer(
      socket,
      (p, f) => this.#frame(p, f),
      () => this.#changed(),
    );
    this.peers.push(peer);
    peer.send({ op: 10, d: { heartbeat_interval: this.heartbeatInterval } });
    this.#changed();
  }

  #frame(peer: GatewayPeer, f: Received): void {
    if (f.op === 1 && this.ackHeartbeats) peer.send({ op: 11 });
    if (f.op === 2) this.#identify(peer);
    if (f.op === 6) this.#resume(peer, f.d as { session_id?: string; seq?: number });
    this.#changed();
  }

  #identify(peer: GatewayPeer): void {
    this.identifies++;
    if (this.refuseIdentify !== null) return peer.close(this.refuseIdentify, "refused");
    const session: Session = { id: `session-${this.#nextSession++}`, log: [] };
    this.sessions.set(session.id, session);
    // READY, constructed from the Ready Event Fields table (test/corpus/discord/gateway/ready.json).
    const d = {
      v: 10,
      user: { id: this.botUserId, username: "hermes", bot: true },
      guilds: [],
      session_id: session.id,
      resume_gateway_url: this.url,
      application: { id: this.botUserId, flags: 1 << 19 },
    };
    session.log.push({ s: 1, t: "READY", d });
    peer.send({ op: 0, s: 1, t: "READY", d });
  }

  #resume(peer: GatewayPeer, d: { session_id?: string; seq?: number }): void {
    const session = this.sessions.get(d.session_id ?? "");
    if (!session) return peer.send({ op: 9, d: false });
    this.resumes++;
    for (const e of session.log.filter((x) => x.s > (d.seq ?? 0))) peer.send({ op: 0, s: e.s, t: e.t, d: e.d });
    const s = (session.log.at(-1)?.s ?? 0) + 1;
    session.log.push({ s, t: "RESUMED", d: null });
    peer.send({ op: 0, s, t: "RESUMED", d: null });
  }
}
