/**
 * bench/handoff: handoffs under `wrangler dev` (fake model and Telegram forum on loopback),
 * measured at the client from the moment the POST goes out: to `running` (pickup) and to
 * `completed`, in two modes in the same run, same workload:
 *   event — production: the session's own object claims a request as it lands;
 *   poll  — the original 2-second polling watcher, as the baseline: the bench wrapper
 *           entry (BENCH_HANDOFF_POLL_MS=2000) makes claims wait for the watcher's next tick.
 * Prints p50/p99/mean per mode and the ratios. Then platform → platform (bench/handoff-chats.ts):
 * `/handoff slack` in a Telegram DM, to the same person's Slack DM (`--chats`, 0 skips it).
 * Run: npm run bench:handoff [-- --handoffs 200 --concurrency 10 --chats 50]
 */
import { parseArgs } from "node:util";
import { chatHandoffs } from "./handoff-chats.ts";
import { benchWorker, handoffTimes, main, mean, newSession, percentile, pool, ratio, startFakes, summary, type Fakes, type HandoffTimes } from "./lib.ts";

const { values } = parseArgs({
  options: { handoffs: { type: "string", default: "200" }, concurrency: { type: "string", default: "10" }, chats: { type: "string", default: "50" } },
});
const N = Number(values.handoffs);
const C = Number(values.concurrency);
const FORUM = "-100999";
const POLL_MS = 2000;

async function run(f: Fakes, mode: "event" | "poll"): Promise<HandoffTimes[]> {
  const vars = { ...f.vars, TELEGRAM_HOME_CHANNEL: FORUM, ...(mode === "poll" ? { BENCH_HANDOFF_POLL_MS: String(POLL_MS) } : {}) };
  const w = await benchWorker(vars, { wrapper: mode === "poll" });
  const ids: string[] = [];
  for (let i = 0; i < N; i++) ids.push(await newSession(w, `bench ${mode} ${i}`));
  const out: HandoffTimes[] = [];
  await pool(ids, C, async (id) => {
    // A random pause first, in both modes: requests then arrive at random phases of the
    // watcher's clock (a closed loop would otherwise line them up just after its ticks).
    await new Promise((r) => setTimeout(r, Math.random() * POLL_MS));
    out.push(await handoffTimes(w, id, "telegram"));
  });
  await w.stop();
  return out;
}

main("bench/handoff", 30 * 60_000, async () => {
  const f = await startFakes();
  f.telegram.forums.add(FORUM);
  console.log(`bench/handoff: ${N} handoffs per mode, ${C} at a time, wrangler dev, fake model and Telegram forum on loopback`);
  const event = await run(f, "event");
  const poll = await run(f, "poll");
  const col = (xs: HandoffTimes[], k: keyof HandoffTimes) => xs.map((x) => x[k]);
  console.log(summary("event: POST → 202", col(event, "accepted")));
  console.log(summary("event: POST → running (pickup)", col(event, "running")));
  console.log(summary("event: POST → completed", col(event, "completed")));
  console.log(summary(`poll (${POLL_MS / 1000} s watcher): POST → 202`, col(poll, "accepted")));
  console.log(summary(`poll (${POLL_MS / 1000} s watcher): POST → running`, col(poll, "running")));
  console.log(summary(`poll (${POLL_MS / 1000} s watcher): POST → completed`, col(poll, "completed")));
  const [ep, pp] = [col(event, "running"), col(poll, "running")];
  console.log(
    `pickup: the watcher takes ${ratio(mean(pp), mean(ep))} as long as event pickup (means), ${ratio(percentile(pp, 50), percentile(ep, 50))} at p50; event pickup p99 ${percentile(ep, 99).toFixed(1)} ms (target < 100 ms); completed p50 ${percentile(col(event, "completed"), 50).toFixed(1)} ms (target < 300 ms)`,
  );
  const chats = Number(values.chats);
  if (chats > 0) {
    const t = await chatHandoffs(f, chats, C);
    console.log(`platform → platform: ${chats} people, /handoff slack in a Telegram DM → their Slack DM, ${C} at a time`);
    console.log(
      summary(
        "chat: /handoff webhook → 200",
        t.map((x) => x.ack),
      ),
    );
    console.log(
      summary(
        "chat: → notice in the Slack DM",
        t.map((x) => x.arrived),
      ),
    );
    console.log(
      summary(
        "chat: → 'moved' line in Telegram",
        t.map((x) => x.told),
      ),
    );
  }
});
