/**
 * bench/webhook-ack: signed deliveries per platform, 50 in flight, against `wrangler dev`.
 * The baseline, in the same run and under the same load: GET /health (a request that does
 * nothing) through the same dev server, at the start and again just before each mode (the
 * host's speed drifts over the minutes a run takes; each mode's ratios are to the /health
 * measured just before it, and its rate also to the first). For each platform, twice:
 *   new chats — every delivery from a chat never seen (each makes an Inbox and a session
 *               object, so replies are not queued behind each other);
 *   existing  — deliveries spread over chats made beforehand, at least as many as are in
 *               flight and at most 5 deliveries each (a user may have 5 messages waiting
 *               in a session; a 6th gets "slow down", as bench/chaos k shows);
 * p50/p99 time to the 2xx (and its ratio to /health's), deliveries per second against
 * /health's requests per second, time to the reply at the (loopback) platform API, and a
 * check that every delivery got exactly one reply, and the workerd process's CPU time (from
 * /proc, user + system) per delivery against a /health request's: real CPU, so a loaded
 * machine does not inflate it as it does the sampled profiles.
 * `--profile`: afterwards, per platform and mode, a CPU profile of `--profile-count`
 * deliveries over the inspector port, attributed to the Worker and each Durable Object
 * (bench/profile.ts); then the same deliveries through the bench wrapper entry with
 * BENCH_STATS=1: every SQLite statement each object runs and every remote call each side
 * makes, per delivery (`--stats`: only these counts, without the profiles). `--ceiling`: then new
 * chats again through the bench entry with BENCH_NO_INBOX=1 (bench/entries/no-inbox.ts: each
 * message straight to a new session object, no Inbox), against /health on that dev server: what
 * a design with one object per new chat could at best reach. `--save-profiles DIR`
 * also writes each profile there as `<platform>-<mode>.cpuprofile`, for Chrome DevTools.
 * Run: npm run bench:webhooks [-- --count 1000 --concurrency 50 --platforms matrix,telegram --profile --profile-count 200 --stats --ceiling --save-profiles DIR]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { DevWorker } from "../test/support/wrangler-dev.ts";
import {
  benchWorker,
  delivery,
  fakeOf,
  fetchWithin,
  health,
  main,
  percentile,
  PLATFORMS,
  pool,
  post,
  ratio,
  reply,
  startFakes,
  summary,
  until,
  within,
  workerdCpuMs,
  type Delivery,
  type Fakes,
  type Platform,
} from "./lib.ts";
import { describeAttribution, profileWhile } from "./profile.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "1000" },
    concurrency: { type: "string", default: "50" },
    profile: { type: "boolean", default: false },
    /** Only the statement and remote-call counts of `--profile`, without the CPU profiles. */
    stats: { type: "boolean", default: false },
    /** New chats again with no Inbox (bench/entries/no-inbox.ts): the one-object ceiling. */
    ceiling: { type: "boolean", default: false },
    "profile-count": { type: "string", default: "200" },
    platforms: { type: "string", default: PLATFORMS.join(",") },
    "save-profiles": { type: "string" },
  },
});
/** `--platforms matrix,telegram`: only these (default: all). */
const ONLY = PLATFORMS.filter((p) => values.platforms.split(",").includes(p));
const COUNT = Number(values.count);
const CONCURRENCY = Number(values.concurrency);
const PROFILE_COUNT = Number(values["profile-count"]);
const MODES = ["new chats", "existing"] as const;
/** Messages one user may have waiting in a session before the next gets "slow down" (the Inbox's cap). */
const WAITING_PER_USER = 5;
type Mode = (typeof MODES)[number];

let phase = 0;

/** Replies seen for `ds` since the fake had `from` calls: per chat, missing and extra ones. */
function tally(f: Fakes, ds: readonly Delivery[], from: number): { lost: number; twice: number | null } {
  const calls = fakeOf(f, ds[0]!.platform).calls.slice(from);
  const byChat = Map.groupBy(ds, (d) => d.chat);
  let lost = 0;
  let twice = 0;
  for (const group of byChat.values()) {
    // Discord replies are edits of each interaction's own message: one or more calls each.
    const got = group[0]!.platform === "discord" ? group.filter((d) => calls.some(d.isReply)).length : calls.filter(group[0]!.isReply).length;
    lost += Math.max(0, group.length - got);
    twice += Math.max(0, got - group.length);
  }
  return { lost, twice: ds[0]!.platform === "discord" ? null : twice };
}

/**
 * `n` deliveries, `CONCURRENCY` in flight, made ready (for `existing`: their sessions made
 * beforehand); `run` sends them: their acks, their rate, and their replies.
 */
async function prepare(w: DevWorker, f: Fakes, p: Platform, n: number, mode: Mode) {
  const base = ++phase * 100_000;
  const fake = fakeOf(f, p);
  const chats = mode === "existing" ? Math.max(CONCURRENCY, Math.ceil(n / WAITING_PER_USER)) : n;
  if (mode === "existing") {
    const first = await Promise.all(Array.from({ length: chats }, (_, i) => delivery(p, base + i, "hello")));
    const from = fake.calls.length;
    await pool(first, CONCURRENCY, async (d) => void (await post(w, d)));
    await until(() => tally(f, first, from).lost === 0, 120_000, `${p}: the sessions made beforehand`);
    await new Promise((r) => setTimeout(r, 300));
  }
  const deliveries = await Promise.all(Array.from({ length: n }, (_, i) => delivery(p, mode === "existing" ? base + (i % chats) : base + i, `bench ${i}`)));
  return {
    async run() {
      const from = fake.calls.length;
      const ack: number[] = [];
      const replies: Array<Promise<number>> = [];
      const t0 = performance.now();
      const cpu0 = workerdCpuMs(w);
      const thread0 = workerdCpuMs(w, "isolate");
      await pool(deliveries, CONCURRENCY, async (d) => {
        const start = performance.now();
        // A new chat's reply is the first call to it; in an existing one replies queue, so only their count is checked.
        if (mode === "new chats") replies.push(reply(f, d, from, 120_000).then(() => performance.now() - start));
        ack.push(await post(w, d));
      });
      const seconds = (performance.now() - t0) / 1000;
      const replyTimes = await within(Promise.all(replies), 120_000, `${p}: every reply`);
      await until(() => tally(f, deliveries, from).lost === 0, 120_000, `${p}: every reply`).catch(() => undefined);
      const allReplied = (performance.now() - t0) / 1000;
      // What the replies leave behind (D1 copies) is part of a delivery's work too.
      await new Promise((r) => setTimeout(r, 500));
      const cpu1 = workerdCpuMs(w);
      const thread1 = workerdCpuMs(w, "isolate");
      const cpuEach = cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / n : null;
      const threadEach = thread0 !== null && thread1 !== null ? (thread1 - thread0) / n : null;
      return { ack, replyTimes, perSecond: n / seconds, allReplied, cpuEach, threadEach, ...tally(f, deliveries, from) };
    },
  };
}

main("bench/webhook-ack", 30 * 60_000, async () => {
  const f = await startFakes();
  const w = await benchWorker(f.vars);
  console.log(
    `bench/webhook-ack: ${COUNT} signed deliveries per platform and mode, ${CONCURRENCY} in flight, wrangler dev on loopback, fake model; its storage in ${process.env.TMPDIR}`,
  );
  // The first hundreds of requests of a fresh dev server run at about half the rate of later ones
  // (measured: 245 against 371-525/s): a warm-up, unmeasured, before the first baseline.
  await baseline(w);
  const first = await baseline(w);
  console.log(summary("baseline: GET /health, same load", first.floor));
  console.log(`baseline: ${first.rate.toFixed(0)} requests/s${first.cpu !== null ? `, workerd CPU ${first.cpu.toFixed(2)} ms per request` : ""}`);
  for (const p of ONLY) {
    for (const mode of MODES) {
      const prepared = await prepare(w, f, p, COUNT, mode);
      // The host's speed drifts over the minutes a run takes (TESTING.md's loop: 1.6-2.7 s): each
      // mode is also set against /health measured just before it, at the same load.
      const near = await baseline(w);
      const r = await prepared.run();
      console.log(
        `\n${p}, ${mode}: ${r.perSecond.toFixed(0)} deliveries/s (${ratio(r.perSecond, near.rate)} the rate of /health just before, ${near.rate.toFixed(0)}/s; ${ratio(r.perSecond, first.rate)} the first baseline's); every reply in ${r.allReplied.toFixed(1)} s`,
      );
      console.log(summary(`${p}, ${mode}: time to 2xx`, r.ack, near.floor));
      if (r.replyTimes.length) console.log(summary(`${p}, ${mode}: time to the reply`, r.replyTimes));
      console.log(`${p}, ${mode}: lost ${r.lost}, answered twice ${r.twice ?? "n/a"}; p99 to 2xx ${percentile(r.ack, 99).toFixed(2)} ms (target < 50 ms)`);
      // Real CPU of the workerd process (isolate, SQLite, local D1) from /proc: robust to a loaded machine, unlike the sampled profiles.
      if (r.cpuEach !== null && near.cpu !== null)
        console.log(
          `${p}, ${mode}: workerd CPU ${r.cpuEach.toFixed(2)} ms per delivery, reply and D1 copy included (${ratio(r.cpuEach, near.cpu)} a /health request just before)`,
        );
      // Of it, the main thread of the process that runs the isolate: the Worker, every object, miniflare's D1 and SQLite
      // share it, and at this load it is what a rate is bounded by (docs/benchmarks.md, 6 Dec).
      if (r.threadEach !== null && near.thread !== null)
        console.log(
          `${p}, ${mode}: the runtime's main thread ${r.threadEach.toFixed(2)} ms per delivery (${ratio(r.threadEach, near.thread)} a /health request's ${near.thread.toFixed(2)} ms)`,
        );
    }
  }
  if (values.profile) await profiles(w, f);
  if (!values.profile && !values.stats && !values.ceiling) return;
  await w.stop();
  if (values.stats || values.profile) await counts(f);
  if (values.ceiling) await ceiling(f);
});

/** New chats through the bench entry with BENCH_NO_INBOX=1: one object per new chat (not a product: bench/entries/no-inbox.ts). */
async function ceiling(f: Fakes): Promise<void> {
  const w = await benchWorker({ ...f.vars, BENCH_NO_INBOX: "1" }, { wrapper: true });
  console.log(`\nThe one-object ceiling (BENCH_NO_INBOX=1: each message straight to a new session object, no Inbox), ${COUNT} new chats per platform:`);
  await baseline(w);
  for (const p of ONLY) {
    const prepared = await prepare(w, f, p, COUNT, "new chats");
    const near = await baseline(w);
    const r = await prepared.run();
    const thread =
      r.threadEach !== null && near.thread !== null
        ? `; the runtime's main thread ${r.threadEach.toFixed(2)} ms per delivery (${ratio(r.threadEach, near.thread)} a /health request's)`
        : "";
    console.log(
      `${p}, no Inbox: ${r.perSecond.toFixed(0)} deliveries/s (${ratio(r.perSecond, near.rate)} the rate of /health just before, ${near.rate.toFixed(0)}/s); lost ${r.lost}${thread}`,
    );
  }
  await w.stop();
}

/** GET /health, COUNT of them at CONCURRENCY in flight: each one's time, requests/s, workerd's CPU per request and its runtime's main thread's. */
async function baseline(w: DevWorker): Promise<{ floor: number[]; rate: number; cpu: number | null; thread: number | null }> {
  const floor: number[] = [];
  const t0 = performance.now();
  const c0 = workerdCpuMs(w);
  const th0 = workerdCpuMs(w, "isolate");
  await pool(Array.from({ length: COUNT }), CONCURRENCY, async () => void floor.push(await health(w)));
  const rate = COUNT / ((performance.now() - t0) / 1000);
  const c1 = workerdCpuMs(w);
  const th1 = workerdCpuMs(w, "isolate");
  return { floor, rate, cpu: c0 !== null && c1 !== null ? (c1 - c0) / COUNT : null, thread: th0 !== null && th1 !== null ? (th1 - th0) / COUNT : null };
}

/** CPU profiles of `PROFILE_COUNT` deliveries per platform and mode, attributed per side. */
async function profiles(w: DevWorker, f: Fakes): Promise<void> {
  console.log(
    `\nCPU profiles (inspector, sampled every 250 µs), ${PROFILE_COUNT} deliveries per platform and mode, ${CONCURRENCY} in flight, until every reply arrived and 0.5 s after:`,
  );
  for (const p of ONLY) {
    for (const mode of MODES) {
      const job = await prepare(w, f, p, PROFILE_COUNT, mode);
      // The /proc CPU of the process running the isolate over the same deliveries: a bound the
      // profile's figure must stay under (it adds miniflare's own workers, SQLite's commits and I/O).
      let processMs: number | null = null;
      const { attribution, profile } = await profileWhile(w.inspectorPort, async () => {
        const before = workerdCpuMs(w, "isolate");
        try {
          return await job.run();
        } finally {
          const after = workerdCpuMs(w, "isolate");
          processMs = before === null || after === null ? null : after - before;
        }
      });
      if (values["save-profiles"]) {
        mkdirSync(values["save-profiles"], { recursive: true });
        writeFileSync(path.join(values["save-profiles"], `${p}-${mode.replace(/\W+/g, "-")}.cpuprofile`), JSON.stringify(profile));
      }
      console.log(`\n${p}, ${mode}:`);
      for (const line of describeAttribution(attribution, PROFILE_COUNT)) console.log(line);
      if (processMs !== null) {
        console.log(
          `  the main thread of the workerd process running the isolate, same deliveries (/proc): ${(processMs / PROFILE_COUNT).toFixed(2)} ms of CPU per delivery, with miniflare's D1 and object wrappers, SQLite and workerd's I/O`,
        );
      }
    }
  }
}

/** Every SQLite statement and remote call per delivery, per side (the bench entry with BENCH_STATS=1). */
async function counts(f: Fakes): Promise<void> {
  const counted = await benchWorker({ ...f.vars, BENCH_STATS: "1" }, { wrapper: true });
  console.log(`\nStorage statements and remote calls per delivery (bench wrapper, BENCH_STATS=1; ms by performance.now(), 1 ms steps averaged):`);
  for (const p of ONLY) {
    for (const mode of MODES) {
      const job = await prepare(counted, f, p, PROFILE_COUNT, mode);
      await fetchWithin(`${counted.url}/__bench/stats`, { method: "DELETE" });
      await job.run();
      const stats = (await (await fetchWithin(`${counted.url}/__bench/stats`)).json()) as Record<string, Record<string, { n: number; ms: number }>>;
      console.log(`\n${p}, ${mode}:`);
      for (const [side, ops] of Object.entries(stats)) {
        const rows = Object.entries(ops).sort((a, b) => b[1].n - a[1].n);
        const total = rows.reduce((acc, [, t]) => acc + t.n, 0);
        const statements = rows.filter(([what]) => what.startsWith("sql ") && !what.endsWith("(reading rows)")).reduce((acc, [, t]) => acc + t.n, 0);
        const remote = rows.filter(([what]) => what.startsWith("call ") || what.startsWith("D1 ")).reduce((acc, [, t]) => acc + t.n, 0);
        const each = (n: number) => (n / PROFILE_COUNT).toFixed(1);
        console.log(`  ${side}: ${each(total)} operations per delivery (${each(statements)} SQL statements, ${each(remote)} remote calls)`);
        for (const [what, t] of rows) console.log(`    ${(t.n / PROFILE_COUNT).toFixed(2).padStart(6)} × ${(t.ms / t.n).toFixed(3).padStart(7)} ms  ${what}`);
      }
    }
  }
}
