/**
 * bench/latency-sim: what each path waits for, with network round trips simulated. The
 * bench wrapper entry (bench/entries/bench.ts) delays every D1 call and every Durable
 * Object stub call, by the Worker and by the objects, by a set time; for each setting of
 * D1/object delays this runs `wrangler dev` and measures, one request at a time:
 *   - time to the 2xx of a webhook per platform, for a new chat and for an existing session;
 *   - Telegram `/stop`; `POST …/handoff` to its 202, and until the handoff is running;
 *   - a turn's time to its first `delta` (TTFT);
 *   - `GET /health` through the same wrapper (the floor: touches no binding).
 * Then it fits, per path, latency = base + a·(D1 delay) + b·(object delay) over the p50s:
 * a and b are the sequential round trips of each kind the path waits for (calls that
 * overlap show as one, of the slower kind).
 * Run: npm run bench:latency [-- --samples 20 --warmup 3 --delays 0/0,30/10,80/20 --gap <ms after each sample>]
 */
import { parseArgs } from "node:util";
import type { DevWorker } from "../test/support/wrangler-dev.ts";
import {
  benchWorker,
  delivery,
  exchange,
  handoffTimes,
  health,
  main,
  newSession,
  percentile,
  PLATFORMS,
  postTurn,
  startFakes,
  timeTurn,
  type Fakes,
  type HandoffTimes,
} from "./lib.ts";
import { fitTwo } from "./fit.ts";

const { values } = parseArgs({
  options: {
    samples: { type: "string", default: "20" },
    warmup: { type: "string", default: "3" },
    delays: { type: "string", default: "0/0,30/10,80/20" },
    gap: { type: "string" },
  },
});
const SAMPLES = Number(values.samples);
const WARMUP = Number(values.warmup);
const DELAYS = values.delays.split(",").map((pair) => {
  const [d1, obj] = pair.split("/").map(Number);
  if (!Number.isFinite(d1) || !Number.isFinite(obj)) throw new Error(`--delays: '${pair}' is not <D1 ms>/<object ms>`);
  return { d1: d1!, obj: obj! };
});
const FORUM = "-100424242";

type Sampler = (w: DevWorker, f: Fakes, i: number) => Promise<number>;

/**
 * The pause after each sample: what a request leaves behind (D1 copies, a route sync) runs
 * after its answer, and with delays it would otherwise still run, on the same isolate,
 * during the next sample. `--gap` ms, or by default four of the longest delay plus 50 ms.
 */
let gapMs = 0;
const settle = () => new Promise((r) => setTimeout(r, gapMs));

let chats = 0;
const chat = () => ++chats;

/** How many of each: untimed first, then timed (a whole round of warm-up runs first on a fresh Worker). */
let rounds = { warmup: WARMUP, samples: SAMPLES };

/** Repeats `sample` (after the untimed ones), one at a time. */
async function measure(w: DevWorker, f: Fakes, sample: Sampler): Promise<number[]> {
  for (let i = 0; i < rounds.warmup; i++) {
    await sample(w, f, -1 - i);
    await settle();
  }
  const out: number[] = [];
  for (let i = 0; i < rounds.samples; i++) {
    out.push(await sample(w, f, i));
    await settle();
  }
  return out;
}

/** Every path, measured on one Worker: path name → samples (ms). */
async function paths(w: DevWorker, f: Fakes): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  out.set("GET /health (floor)", await measure(w, f, () => health(w)));
  for (const p of PLATFORMS) {
    out.set(`${p} new chat → 2xx`, await measure(w, f, async () => exchange(w, f, await delivery(p, chat()))));
    const c = chat();
    out.set(`${p} existing session → 2xx`, await measure(w, f, async (_w, _f, i) => exchange(w, f, await delivery(p, c, `more ${i}`))));
  }
  const stopIn = chat();
  await exchange(w, f, await delivery("telegram", stopIn, "something to stop"));
  out.set("telegram /stop → 2xx", await measure(w, f, async () => exchange(w, f, await delivery("telegram", stopIn, "/stop"))));
  const handoffs: HandoffTimes[] = [];
  for (let i = 0; i < rounds.warmup + rounds.samples; i++) {
    const id = await newSession(w, "latency");
    await settle();
    const times = await handoffTimes(w, id, "telegram");
    if (i >= rounds.warmup) handoffs.push(times);
    await settle();
  }
  out.set(
    "POST …/handoff → 202",
    handoffs.map((h) => h.accepted),
  );
  out.set(
    "POST …/handoff → running",
    handoffs.map((h) => h.running),
  );
  out.set(
    "turn → first delta (TTFT)",
    await measure(w, f, async () => {
      const id = await newSession(w);
      await settle();
      return (
        await timeTurn(
          () => postTurn(w, id, "how long until the first token?"),
          (event) => event === "delta",
        )
      ).ttft;
    }),
  );
  return out;
}

main("bench/latency-sim", 30 * 60_000, async () => {
  const f = await startFakes();
  f.telegram.forums.add(FORUM);
  console.log(
    `bench/latency-sim: ${SAMPLES} samples per path, one at a time; D1/object delays ${DELAYS.map((d) => `${d.d1}/${d.obj}`).join(", ")} ms; wrangler dev with the bench wrapper entry, loopback fakes`,
  );
  const runs: Array<{ d1: number; obj: number; results: Map<string, number[]> }> = [];
  for (const d of DELAYS) {
    gapMs = values.gap !== undefined ? Number(values.gap) : 4 * Math.max(d.d1, d.obj) + 50;
    const w = await benchWorker(
      { ...f.vars, TELEGRAM_HOME_CHANNEL: FORUM, BENCH_D1_DELAY_MS: String(d.d1), BENCH_DO_DELAY_MS: String(d.obj) },
      { wrapper: true },
    );
    console.log(`  measuring with D1 ${d.d1} ms, objects ${d.obj} ms (${gapMs} ms after each sample)…`);
    // A fresh isolate compiles as it goes: one short round of every path first, not counted.
    rounds = { warmup: 0, samples: 2 };
    await paths(w, f);
    rounds = { warmup: WARMUP, samples: SAMPLES };
    runs.push({ ...d, results: await paths(w, f) });
    await w.stop();
  }
  const names = [...runs[0]!.results.keys()];
  const head = runs.map((r) => `${`${r.d1}/${r.obj} ms: p50`.padStart(17)} ${"p99".padStart(7)}`).join(" ");
  console.log(`\n${"path".padEnd(30)} ${head}   fitted round trips: D1 object`);
  for (const name of names) {
    const cells = runs.map((r) => {
      const xs = r.results.get(name)!;
      return `${percentile(xs, 50).toFixed(1).padStart(17)} ${percentile(xs, 99).toFixed(1).padStart(7)}`;
    });
    const fitted = runs.length >= 3 ? fitTwo(runs.map((r) => ({ x1: r.d1, x2: r.obj, y: percentile(r.results.get(name)!, 50) }))) : null;
    const counts = fitted ? `${fitted.a.toFixed(2).padStart(24)} ${fitted.b.toFixed(2).padStart(6)}` : "   (needs 3 delay settings)";
    console.log(`${name.padEnd(30)} ${cells.join(" ")}${counts}`);
  }
  const floor = runs.map((r) => percentile(r.results.get("GET /health (floor)")!, 50));
  console.log(`\np50 against the floor (GET /health, same wrapper) at each setting:`);
  for (const name of names.slice(1))
    console.log(`${name.padEnd(30)} ${runs.map((r, i) => `${(percentile(r.results.get(name)!, 50) / floor[i]!).toFixed(2)}x`.padStart(10)).join(" ")}`);
  console.log("\nTarget (issue 12): every webhook, /stop and the handoff 202 fit ≤ 1 round trip in all (D1 + object); TTFT fits object 1, D1 0.");
});
