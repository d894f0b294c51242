/**
 * bench/turn-overhead: what the gateway adds to a turn.
 *
 * Same fake OpenAI-compatible provider on loopback, measured two ways in one run:
 *   direct  — POST /chat/completions to the provider;
 *   gateway — POST /v1/sessions/:id/turns through `wrangler dev` (Worker → SessionAgent →
 *             provider; D1 written behind), read as the CLI reads it;
 * and, for context, the floor: GET /health through the same `wrangler dev` (the cost of any
 * request through the local dev server, before the gateway does anything).
 * Prints p50/p99 time to first token and total turn time, and the overhead and ratios.
 * `--profile`: afterwards, a CPU profile of `--profile-turns` more turns (one at a time, as
 * timed), attributed to the Worker and each Durable Object with their heaviest functions
 * (bench/profile.ts): where a turn's CPU goes before and after its first token.
 * Run: npm run bench:turn [-- --turns 200 --warmup 20 --profile --profile-turns 100]
 */
import { parseArgs } from "node:util";
import { describeAttribution, profileWhile } from "./profile.ts";
import { benchWorker, fetchWithin, health, main, ms, newSession, percentile, postTurn, ratio, startFakes, summary, timeTurn } from "./lib.ts";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "200" },
    warmup: { type: "string", default: "20" },
    profile: { type: "boolean", default: false },
    "profile-turns": { type: "string", default: "100" },
  },
});
const TURNS = Number(values.turns);
const WARMUP = Number(values.warmup);
const TURNS_PER_SESSION = 10;

main("bench/turn-overhead", 20 * 60_000, async () => {
  const f = await startFakes();
  const w = await benchWorker(f.vars);
  const direct: Array<{ ttft: number; total: number }> = [];
  const gateway: Array<{ ttft: number; total: number }> = [];
  const floor: number[] = [];
  // When each gateway turn's request reached the provider, from the moment its POST went out.
  const toProvider: number[] = [];
  const fromProvider: number[] = [];
  let posted = Number.NaN;
  let reached = Number.NaN;
  const handle = f.llm.handle.bind(f.llm);
  f.llm.handle = (req: Request) => {
    reached = performance.now();
    return handle(req);
  };
  let session = "";
  const body = JSON.stringify({ model: "bench", stream: true, messages: [{ role: "user", content: "benchmark turn" }] });
  const isChunkText = (_e: string, data: string) =>
    data !== "[DONE]" && (JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content !== undefined;
  for (let i = 0; i < WARMUP + TURNS; i++) {
    const d = await timeTurn(
      () => fetchWithin(`${f.urls.llm}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body }),
      isChunkText,
    );
    if (i % TURNS_PER_SESSION === 0) session = await newSession(w);
    reached = Number.NaN;
    const g = await timeTurn(
      () => {
        posted = performance.now();
        return postTurn(w, session, `benchmark turn ${i}`);
      },
      (event) => event === "delta",
    );
    const split = reached - posted;
    const h = await health(w);
    if (i >= WARMUP) {
      direct.push(d);
      gateway.push(g);
      floor.push(h);
      if (Number.isFinite(split)) {
        toProvider.push(split);
        fromProvider.push(g.ttft - split);
      }
    }
  }
  const col = (xs: typeof direct, k: "ttft" | "total") => xs.map((s) => s[k]);
  console.log(
    `bench/turn-overhead: ${TURNS} turns (after ${WARMUP} warm-up), ${TURNS_PER_SESSION} turns per session, wrangler dev on loopback; its storage in ${process.env.TMPDIR}`,
  );
  console.log(summary("direct  time to first token", col(direct, "ttft")));
  console.log(summary("gateway time to first token", col(gateway, "ttft")));
  console.log(summary("floor: GET /health via wrangler dev", floor));
  console.log(summary("direct  total", col(direct, "total")));
  console.log(summary("gateway total", col(gateway, "total")));
  for (const p of [50, 99]) {
    const [g, d, fl] = [percentile(col(gateway, "ttft"), p), percentile(col(direct, "ttft"), p), percentile(floor, p)];
    console.log(
      `added time to first token at p${p}: ${ms(g - d)} (gateway/direct ${ratio(g, d)}; target ≤ ${p === 50 ? 5 : 20} ms); beyond the dev-server floor: ${ms(g - fl)} (gateway/floor ${ratio(g, fl)})`,
    );
  }
  if (toProvider.length > 0) {
    console.log(
      `the gateway's time to first token, split (p50 of each part): ${ms(percentile(toProvider, 50))} until the turn's request reached the provider (the Worker, the session object, its writes and the outbound fetch), ${ms(percentile(fromProvider, 50))} from there to the first delta at the client (the provider's first chunk back through the object and the Worker)`,
    );
  }
  if (!values.profile) return;
  const count = Number(values["profile-turns"]);
  const { attribution } = await profileWhile(w.inspectorPort, async () => {
    for (let i = 0; i < count; i++) {
      if (i % TURNS_PER_SESSION === 0) session = await newSession(w);
      await timeTurn(
        () => postTurn(w, session, `profiled turn ${i}`),
        (event) => event === "delta",
      );
    }
  });
  console.log(`\nCPU profile (inspector, sampled every 250 µs) of ${count} more turns, one at a time, a new session every ${TURNS_PER_SESSION}:`);
  for (const line of describeAttribution(attribution, count, 10)) console.log(line.replace("per delivery", "per turn"));
});
