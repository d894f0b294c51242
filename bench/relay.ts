/**
 * bench/relay: the relay under `wrangler dev`, with a minimal gateway (a WebSocket client
 * in this process that says hello and acks everything it is sent).
 *   1. latency: Telegram webhook accepted → `inbound` frame at the gateway, one at a time;
 *      in the same run, the superseded design (RELAY_PUSH_URL: the connector POSTs each
 *      frame to an HTTP endpoint on the gateway) as the baseline;
 *   2. frames per second through one Relay object: a burst of outbound frames answered by
 *      outbound_result (an op needing no platform call), and webhooks/s end to end with
 *      the gateway acking;
 *   3. sockets: 1,000 gateways connected at once, each answering a keepalive.
 * Run: npm run bench:relay [-- --messages 200 --sockets 1000]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { mintRelayToken } from "../workers/relay/token.ts";
import { FakeTelegram } from "../test/support/fake-platforms.ts";
import { tg } from "../test/support/fixtures.ts";
import { serve } from "../test/support/http.ts";
import { TELEGRAM_TEST, telegramHeaders } from "../test/support/signing.ts";
import { startWorker, type DevWorker } from "../test/support/wrangler-dev.ts";
import { mean, percentile, summary } from "./stats.ts";

const { values } = parseArgs({ options: { messages: { type: "string", default: "200" }, sockets: { type: "string", default: "1000" }, burst: { type: "string", default: "5000" } } });
const MESSAGES = Number(values.messages);
const SOCKETS = Number(values.sockets);
const BURST = Number(values.burst);
const SECRET = "bench-secret";

type Frame = Record<string, unknown> & { type: string };

/** A minimal gateway: frames in, a waiter per predicate, acks for every inbound. */
async function gateway(url: string, id: string, onInbound?: (f: Frame) => void) {
  const token = await mintRelayToken(id, SECRET, Math.floor(Date.now() / 1000) + 600);
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/relay`, { headers: { authorization: `Bearer ${token}` } } as never);
  let buffer = "";
  const waiters: Array<{ pred: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  ws.addEventListener("message", (e) => {
    buffer += String(e.data);
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const l of lines) {
      if (!l.trim()) continue;
      const f = JSON.parse(l) as Frame;
      if (f.type === "inbound") {
        onInbound?.(f);
        ws.send(`${JSON.stringify({ type: "inbound_ack", bufferId: f.bufferId })}\n`);
      }
      for (const w of waiters.filter((x) => x.pred(f))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(f);
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error("socket error")), { once: true });
  });
  const next = (pred: (f: Frame) => boolean) => new Promise<Frame>((resolve) => waiters.push({ pred, resolve }));
  const descriptor = next((f) => f.type === "descriptor");
  ws.send(`${JSON.stringify({ type: "hello", platform: "telegram", botId: "" })}\n`);
  await descriptor;
  return { ws, next };
}

const telegram = new FakeTelegram();
const fake = await serve((r) => telegram.handle(r));
const ids = Array.from({ length: SOCKETS }, (_, i) => `gw${i}`);
const baseVars = {
  OFFLINE_STREAM_DELAY_MS: "0",
  TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token,
  TELEGRAM_WEBHOOK_SECRET: TELEGRAM_TEST.secret,
  TELEGRAM_ALLOWED_USERS: "*",
  TELEGRAM_API_ROOT: fake.url,
  RELAY_PLATFORMS: "telegram",
  RELAY_SECRETS: ids.map((id) => `${id}:${SECRET}`).join(","),
};
const webhook = (w: DevWorker, i: number) => fetch(`${w.url}/webhooks/telegram`, { method: "POST", headers: telegramHeaders(), body: JSON.stringify(tg.dm(`bench ${i}`, 600000 + (i % 1000))) });

async function latencyOverSocket(w: DevWorker): Promise<number[]> {
  const arrivals = new Map<string, number>();
  const g = await gateway(w.url, "gw0", (f) => arrivals.set((f.event as { text: string }).text, performance.now()));
  const out: number[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    const arrived = g.next((f) => f.type === "inbound" && (f.event as { text: string }).text === `bench ${i}`);
    const t0 = performance.now();
    await (await webhook(w, i)).arrayBuffer();
    await arrived;
    out.push(arrivals.get(`bench ${i}`)! - t0);
  }
  g.ws.close(1000);
  return out;
}

try {
  console.log(`bench/relay: ${MESSAGES} messages one at a time, ${BURST}-frame burst, ${SOCKETS} sockets; wrangler dev on loopback`);

  // 1. latency, WebSocket relay
  const ws = await startWorker(baseVars);
  const wsLatency = await latencyOverSocket(ws);

  // 2a. frames per second through one Relay object (outbound → outbound_result, no platform call)
  const g = await gateway(ws.url, "gw0");
  let results = 0;
  const allDone = new Promise<void>((resolve) =>
    g.ws.addEventListener("message", (e) => {
      results += (String(e.data).match(/"outbound_result"/g) ?? []).length;
      if (results >= BURST) resolve();
    }),
  );
  const t0 = performance.now();
  const frame = (i: number) => `${JSON.stringify({ type: "outbound", requestId: `r${i}`, platform: "telegram", action: { op: "noop", chat_id: "1" } })}\n`;
  for (let i = 0; i < BURST; i += 100) g.ws.send(Array.from({ length: Math.min(100, BURST - i) }, (_, k) => frame(i + k)).join(""));
  await allDone;
  const framesPerSecond = BURST / ((performance.now() - t0) / 1000);

  // 2b. webhooks per second end to end, 50 in flight, the gateway acking
  let received = 0;
  const g2 = await gateway(ws.url, "gw1");
  g.ws.close(1000);
  const gw0 = await gateway(ws.url, "gw0", () => received++);
  void g2;
  const t1 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < MESSAGES) await (await webhook(ws, 100000 + next++)).arrayBuffer();
  }));
  while (received < MESSAGES) await new Promise((r) => setTimeout(r, 5));
  const webhooksPerSecond = MESSAGES / ((performance.now() - t1) / 1000);
  gw0.ws.close(1000);

  // 3. many sockets held at once
  const held: Array<Awaited<ReturnType<typeof gateway>>> = [];
  const s0 = performance.now();
  for (let i = 0; i < SOCKETS; i += 50) held.push(...(await Promise.all(ids.slice(i, i + 50).map((id) => gateway(ws.url, id)))));
  const connectSeconds = (performance.now() - s0) / 1000;
  const pongs = await Promise.all(held.map((h) => {
    const p = h.next((f) => f.type === "pong");
    h.ws.send('{"type":"ping"}\n');
    return p.then(() => 1);
  }));
  const alive = pongs.length;
  for (const h of held) h.ws.close(1000);
  await ws.stop();

  // 1b. latency, the superseded HTTP push design
  const pushedAt = new Map<string, number>();
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const f = JSON.parse(body) as Frame;
      pushedAt.set((f.event as { text: string }).text, performance.now());
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const pushUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/inbound`;
  const http = await startWorker({ ...baseVars, RELAY_PUSH_URL: pushUrl });
  const httpLatency: number[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    const t = performance.now();
    await (await webhook(http, i)).arrayBuffer();
    while (!pushedAt.has(`bench ${i}`)) await new Promise((r) => setTimeout(r, 1));
    httpLatency.push(pushedAt.get(`bench ${i}`)! - t);
  }
  await http.stop();
  receiver.close();

  console.log(summary("webhook → inbound frame (WebSocket)", wsLatency));
  console.log(summary("webhook → HTTP push (baseline)", httpLatency));
  console.log(`WebSocket vs HTTP push: p50 ${(percentile(wsLatency, 50) / percentile(httpLatency, 50)).toFixed(2)}x, mean ${(mean(wsLatency) / mean(httpLatency)).toFixed(2)}x (target: no worse, p50 < 5 ms)`);
  console.log(`frames through one Relay object: ${framesPerSecond.toFixed(0)}/s (${BURST} outbound → outbound_result; target ≥ 2000/s)`);
  console.log(`webhooks end to end with the gateway acking, 50 in flight: ${webhooksPerSecond.toFixed(0)}/s`);
  console.log(`sockets: ${alive}/${SOCKETS} held and answering keepalives (connected in ${connectSeconds.toFixed(1)} s)`);
} finally {
  await fake.close();
}
