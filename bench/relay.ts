/**
 * bench/relay: the relay under `wrangler dev`, with minimal gateways (WebSocket clients in
 * this process that ack every inbound frame). One Relay object per gateway id; Telegram is
 * relayed to gateway gw0 (`RELAY_PLATFORMS=telegram:gw0`).
 *   1. webhook → `inbound` frame at gw0, one at a time; the baseline in the same run is the
 *      superseded design, the connector POSTing each frame to an HTTP endpoint here (the
 *      bench wrapper entry with BENCH_RELAY_PUSH_URL);
 *   2. frames per second through one Relay object: a burst of `outbound` frames (an op
 *      needing no platform call) answered by `outbound_result`;
 *   3. webhooks per second end to end, 50 in flight, gw0 acking;
 *   4. many gateways at once: `--sockets` gateway ids, each its own Relay object, all
 *      connected together, each answering a keepalive.
 * Run: npm run bench:relay [-- --messages 200 --burst 5000 --sockets 1000]
 */
import { parseArgs } from "node:util";
import { serve } from "../test/support/http.ts";
import { tg } from "../test/support/fixtures.ts";
import { telegramHeaders } from "../test/support/signing.ts";
import type { DevWorker } from "../test/support/wrangler-dev.ts";
import { mintRelayToken } from "../workers/relay/token.ts";
import { benchWorker, fetchWithin, main, mean, own, percentile, pool, ratio, startFakes, summary, until, within } from "./lib.ts";

const { values } = parseArgs({
  options: { messages: { type: "string", default: "200" }, sockets: { type: "string", default: "1000" }, burst: { type: "string", default: "5000" } },
});
const MESSAGES = Number(values.messages);
const SOCKETS = Number(values.sockets);
const BURST = Number(values.burst);
const SECRET = "bench-secret";
const WAIT_MS = 15_000;

type Frame = Record<string, unknown> & { type: string };

/** A minimal gateway: frames in (inbound ones acked at once), a bounded waiter per predicate. */
async function gateway(url: string, id: string, onFrame?: (f: Frame, at: number) => void) {
  const token = await mintRelayToken(id, SECRET, Math.floor(Date.now() / 1000) + 600);
  // Node's WebSocket takes headers (undici), unlike the browser's.
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/relay`, { headers: { authorization: `Bearer ${token}` } } as unknown as string[]);
  const forget = own({ stop: async () => ws.close(1000), kill: () => ws.close(1000) });
  let buffer = "";
  const waiters: Array<{ pred: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  ws.addEventListener("message", (e) => {
    const at = performance.now();
    buffer += String(e.data);
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const l of lines) {
      if (!l.trim()) continue;
      const f = JSON.parse(l) as Frame;
      if (f.type === "inbound") ws.send(`${JSON.stringify({ type: "inbound_ack", bufferId: f.bufferId })}\n`);
      onFrame?.(f, at);
      for (const w of waiters.filter((x) => x.pred(f))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(f);
      }
    }
  });
  await within(
    new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve(), { once: true });
      ws.addEventListener("error", () => reject(new Error(`gateway ${id}: the socket failed`)), { once: true });
    }),
    WAIT_MS,
    `gateway ${id}: connecting`,
  );
  const next = (pred: (f: Frame) => boolean, what: string) =>
    within(new Promise<Frame>((resolve) => waiters.push({ pred, resolve })), WAIT_MS, `gateway ${id}: ${what}`);
  return {
    ws,
    next,
    /** Says hello for Telegram and waits for the descriptor (only gw0 gets one). */
    async handshake() {
      const descriptor = next((f) => f.type === "descriptor", "the descriptor");
      ws.send(`${JSON.stringify({ type: "hello", platform: "telegram", botId: "" })}\n`);
      await descriptor;
    },
    close() {
      forget();
      ws.close(1000);
    },
  };
}

const webhook = (w: DevWorker, i: number) =>
  fetchWithin(`${w.url}/webhooks/telegram`, {
    method: "POST",
    headers: telegramHeaders(),
    body: JSON.stringify(tg.dm(`bench ${i}`, 600_000 + (i % 1000))),
  }).then(async (res) => {
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`webhook: HTTP ${res.status}`);
  });

/** Webhook → arrival of `n` messages, one at a time; `arrivals` is filled by whoever receives the frames. */
async function latency(w: DevWorker, arrivals: Map<string, number>, n = MESSAGES): Promise<number[]> {
  arrivals.clear();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await webhook(w, i);
    await until(() => arrivals.has(`bench ${i}`), WAIT_MS, `the frame of message ${i}`);
    out.push(arrivals.get(`bench ${i}`)! - t0);
  }
  return out;
}

const textOf = (f: Frame) => String((f.event as { text?: unknown } | undefined)?.text ?? "");

main("bench/relay", 30 * 60_000, async () => {
  const f = await startFakes();
  const ids = Array.from({ length: Math.max(SOCKETS, 2) }, (_, i) => `gw${i}`);
  const vars = {
    ...f.vars,
    RELAY_PLATFORMS: "telegram:gw0",
    RELAY_SECRETS: ids.map((id) => `${id}:${SECRET}`).join(","),
    RELAY_BUFFER_LIMIT: String(MESSAGES * 4),
  };
  console.log(`bench/relay: ${MESSAGES} messages one at a time, a ${BURST}-frame burst, ${SOCKETS} gateways at once; wrangler dev on loopback`);

  // 1. Latency over the socket. gw0 keeps this one socket for 1–3: the Relay refuses a
  // second one while it is live.
  const w = await benchWorker(vars);
  const arrivals = new Map<string, number>();
  let results = 0;
  let received = 0;
  const gw0 = await gateway(w.url, "gw0", (fr, at) => {
    if (fr.type === "inbound") {
      arrivals.set(textOf(fr), at);
      received++;
    } else if (fr.type === "outbound_result") results++;
  });
  await gw0.handshake();
  await latency(w, arrivals, 10); // warm-up
  const wsLatency = await latency(w, arrivals);

  // 2. Frames per second through one Relay object.
  const frame = (i: number) => `${JSON.stringify({ type: "outbound", requestId: `r${i}`, platform: "telegram", action: { op: "noop", chat_id: "1" } })}\n`;
  const t0 = performance.now();
  for (let i = 0; i < BURST; i += 100) gw0.ws.send(Array.from({ length: Math.min(100, BURST - i) }, (_, k) => frame(i + k)).join(""));
  await until(() => results >= BURST, 120_000, `${BURST} outbound_result frames`);
  const framesPerSecond = BURST / ((performance.now() - t0) / 1000);

  // 3. Webhooks per second end to end, the gateway acking.
  received = 0;
  const t1 = performance.now();
  await pool(
    Array.from({ length: MESSAGES }, (_, i) => 100_000 + i),
    50,
    (i) => webhook(w, i),
  );
  await until(() => received >= MESSAGES, 120_000, `${MESSAGES} inbound frames`);
  const webhooksPerSecond = MESSAGES / ((performance.now() - t1) / 1000);
  gw0.close();

  // 4. Many gateways, one Relay object each, connected together.
  const held: Array<Awaited<ReturnType<typeof gateway>>> = [];
  const s0 = performance.now();
  await pool(ids.slice(0, SOCKETS), 50, async (id) => void held.push(await gateway(w.url, id)));
  const connectSeconds = (performance.now() - s0) / 1000;
  const answered = await Promise.allSettled(
    held.map((h) => {
      const pong = h.next((fr) => fr.type === "pong", "a pong");
      h.ws.send('{"type":"ping"}\n');
      return pong;
    }),
  );
  const alive = answered.filter((a) => a.status === "fulfilled").length;
  for (const h of held) h.close();
  await w.stop();

  // 1b. The baseline: each frame POSTed to an endpoint here.
  const pushed = new Map<string, number>();
  const receiver = await serve(async (req) => {
    const at = performance.now();
    for (const line of (await req.text()).split("\n")) if (line.trim()) pushed.set(textOf(JSON.parse(line) as Frame), at);
    return new Response(null, { status: 200 });
  });
  own({ stop: () => receiver.close(), kill: () => undefined });
  const push = await benchWorker({ ...vars, BENCH_RELAY_PUSH_URL: `${receiver.url}/inbound` }, { wrapper: true });
  await latency(push, pushed, 10); // warm-up
  const pushLatency = await latency(push, pushed);
  await push.stop();

  console.log(summary("webhook → inbound frame (WebSocket)", wsLatency));
  console.log(summary("webhook → HTTP push (baseline)", pushLatency));
  console.log(
    `WebSocket vs HTTP push: p50 ${ratio(percentile(wsLatency, 50), percentile(pushLatency, 50))}, mean ${ratio(mean(wsLatency), mean(pushLatency))} (target: no worse, p50 < 5 ms)`,
  );
  console.log(`frames through one Relay object: ${framesPerSecond.toFixed(0)}/s (${BURST} outbound → outbound_result; target ≥ 2000/s)`);
  console.log(`webhooks end to end with the gateway acking, 50 in flight: ${webhooksPerSecond.toFixed(0)}/s`);
  console.log(`gateways at once: ${alive}/${SOCKETS} connected (one Relay object each) and answering keepalives; connected in ${connectSeconds.toFixed(1)} s`);
});
