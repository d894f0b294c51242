import { env, selfFetch } from "../worker/config.ts";
import { mintRelayToken } from "../../workers/relay/token.ts";

export const GW = { id: "gw1", secret: "s3cret-a", rotated: "s3cret-b" };

export type Frame = Record<string, unknown> & { type: string };

/** A gateway's socket as a test drives it: frames received, waits on them, raw sends. */
export interface TestSocket {
  ws: WebSocket;
  frames: Frame[];
  /** Resolves with the next frame (after those already seen by earlier calls) matching `pred`. */
  next(pred?: string | ((f: Frame) => boolean)): Promise<Frame>;
  send(...frames: unknown[]): void;
  raw(text: string): void;
  closed: Promise<{ code: number; reason: string }>;
}

let minted = 0;

/** A fresh token (each call a distinct one, as a gateway mints per dial: the connector takes a token once). */
export async function token(opts: { id?: string; secret?: string; exp?: number } = {}): Promise<string> {
  return mintRelayToken(opts.id ?? GW.id, opts.secret ?? GW.secret, opts.exp ?? Math.floor(Date.now() / 1000) + 240 + (minted++ % 300));
}

export async function connect(bearer: string | null): Promise<TestSocket> {
  const headers: Record<string, string> = { upgrade: "websocket" };
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  const res = await selfFetch("http://edge.test/relay", { headers });
  if (res.status !== 101 || !res.webSocket) throw new Error(`no upgrade: ${res.status}`);
  const ws = res.webSocket;
  const frames: Frame[] = [];
  let buffer = "";
  let consumed = 0;
  const waiters: Array<() => void> = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
  ws.addEventListener("message", (e) => {
    buffer += typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer);
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const l of lines) if (l.trim()) frames.push(JSON.parse(l) as Frame);
    waiters.splice(0).forEach((w) => w());
  });
  ws.accept();
  const matches = (pred: string | ((f: Frame) => boolean) | undefined, f: Frame) =>
    pred === undefined ? true : typeof pred === "string" ? f.type === pred : pred(f);
  return {
    ws,
    frames,
    async next(pred) {
      for (;;) {
        const i = frames.findIndex((f, k) => k >= consumed && matches(pred, f));
        if (i >= 0) {
          consumed = i + 1;
          return frames[i]!;
        }
        await Promise.race([
          new Promise<void>((r) => waiters.push(r)),
          closed.then(() => {
            throw new Error(`socket closed while waiting; frames: ${JSON.stringify(frames)}`);
          }),
        ]);
      }
    },
    send(...fs) {
      ws.send(fs.map((f) => `${JSON.stringify(f)}\n`).join(""));
    },
    raw(text) {
      ws.send(text);
    },
    closed,
  };
}

/** Connects and completes the handshake for Telegram. */
export async function gateway(): Promise<TestSocket> {
  const s = await connect(await token());
  s.send({ type: "hello", platform: "telegram", botId: "123456" });
  await s.next("descriptor");
  return s;
}

/**
 * Empties gateway gw1's buffer: frames a test received and never acknowledged are replayed on
 * the next handshake, where another test (or file: the order comes from Vitest's timing cache)
 * would take them for its own (seen: relay.suite.ts read a forum message fidelity.suite.ts had
 * left). A fresh gateway takes the replays and acknowledges them. Run after every test of the
 * project by test/worker-relay/setup.ts.
 */
export async function emptyGatewayBuffer(): Promise<void> {
  const relay = env.RELAY.getByName(GW.id);
  const left = (await relay.status()).buffered;
  if (left === 0) return;
  const s = await gateway();
  for (let i = 0; i < left; i++) {
    const f = await s.next("inbound");
    s.send({ type: "inbound_ack", bufferId: f.bufferId });
  }
  // The acknowledgements are taken in order after the frames: the buffer is empty once the last is.
  for (let i = 0; i < 100 && (await relay.status()).buffered > 0; i++) await scheduler.wait(0);
  s.ws.close(1000);
  await s.closed;
}
