/**
 * bench/handoff: handoffs under `wrangler dev` (offline model, loopback fake Telegram).
 * Measures, per handoff, request → running (pickup) and request → completed, from the
 * row's own timestamps, for:
 *   event — the scheduler claims a row the moment its request lands (the design)
 *   poll  — HANDOFF_PICKUP=poll: the original 2-second polling watcher, as the baseline
 * Both in the same run, with the same workload; prints p50/p99/mean and the ratio.
 * Run: npm run bench:handoff [-- --handoffs 200 --concurrency 10]
 */
import { parseArgs } from "node:util";
import { FakeTelegram } from "../test/support/fake-platforms.ts";
import { serve } from "../test/support/http.ts";
import { TELEGRAM_TEST } from "../test/support/signing.ts";
import { startWorker, type DevWorker } from "../test/support/wrangler-dev.ts";
import { mean, percentile, summary } from "./stats.ts";

const { values } = parseArgs({ options: { handoffs: { type: "string", default: "200" }, concurrency: { type: "string", default: "10" } } });
const N = Number(values.handoffs);
const C = Number(values.concurrency);
const FORUM = "-100999";

const telegram = new FakeTelegram();
telegram.forums.add(FORUM);
const fake = await serve((r) => telegram.handle(r));

async function run(mode: "event" | "poll"): Promise<{ pickup: number[]; completed: number[]; failed: number }> {
  const worker: DevWorker = await startWorker({
    OFFLINE_STREAM_DELAY_MS: "0",
    HANDOFF_PICKUP: mode,
    TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token,
    TELEGRAM_WEBHOOK_SECRET: TELEGRAM_TEST.secret,
    TELEGRAM_ALLOWED_USERS: "1001",
    TELEGRAM_HOME_CHANNEL: FORUM,
    TELEGRAM_API_ROOT: fake.url,
  });
  const h = { authorization: `Bearer ${worker.token}`, "content-type": "application/json" };
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${worker.url}${path}`, { method, headers: h, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  try {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push((await api<{ session: { id: string } }>("POST", "/v1/sessions", { title: `bench ${mode} ${i}` })).session.id);
    const pickup: number[] = [];
    const completed: number[] = [];
    let failed = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: C }, async () => {
        while (next < ids.length) {
          const id = ids[next++]!;
          await api("POST", `/v1/sessions/${id}/handoff`, { platform: "telegram" });
          let state = "pending";
          let hand = null as { state: string; requested_at: number; claimed_at: number | null; finished_at: number | null } | null;
          while (state === "pending" || state === "running") {
            hand = (await api<{ handoff: typeof hand }>("GET", `/v1/sessions/${id}/handoff?wait=30&state=${state}`)).handoff;
            state = hand!.state;
          }
          if (state !== "completed" || !hand) {
            failed++;
            continue;
          }
          pickup.push(hand.claimed_at! - hand.requested_at);
          completed.push(hand.finished_at! - hand.requested_at);
        }
      }),
    );
    return { pickup, completed, failed };
  } finally {
    await worker.stop();
  }
}

try {
  console.log(`bench/handoff: ${N} handoffs per mode, ${C} at a time, wrangler dev, offline model, fake Telegram forum`);
  const event = await run("event");
  const poll = await run("poll");
  console.log(summary("event: request → running (pickup)", event.pickup));
  console.log(summary("event: request → completed", event.completed));
  console.log(summary("poll (2 s watcher): request → running", poll.pickup));
  console.log(summary("poll (2 s watcher): request → completed", poll.completed));
  console.log(`failed: event ${event.failed}, poll ${poll.failed}`);
  console.log(`pickup: event is ${(mean(poll.pickup) / mean(event.pickup)).toFixed(1)}x faster than the 2 s watcher (means); p99 ${percentile(event.pickup, 99)} ms (target < 100 ms); completed p50 ${percentile(event.completed, 50)} ms (target < 300 ms)`);
} finally {
  await fake.close();
}
