/**
 * bench/turn-overhead: what the gateway adds to a turn.
 *
 * Same fake OpenAI-compatible provider on loopback, measured two ways in one run:
 *   direct  — POST /chat/completions to the provider
 *   gateway — POST /v1/sessions/:id/turns through `wrangler dev` (Worker → SessionAgent →
 *             provider, D1 writes), read as the CLI reads it
 * and, for context, the floor: GET /health through the same `wrangler dev` (the cost of any
 * request through the local dev server, before the gateway does anything).
 * Prints p50/p99 time to first token and total turn time, and the overhead.
 * Run: npm run bench:turn [-- --turns 200]
 */
import { parseArgs } from "node:util";
import { parseSse } from "../workers/agent/index.ts";
import { FakeLlm } from "../test/support/fake-llm.ts";
import { serve } from "../test/support/http.ts";
import { startWorker } from "../test/support/wrangler-dev.ts";
import { percentile, summary, ms } from "./stats.ts";

const { values } = parseArgs({ options: { turns: { type: "string", default: "200" }, warmup: { type: "string", default: "20" } } });
const TURNS = Number(values.turns);
const WARMUP = Number(values.warmup);
const TURNS_PER_SESSION = 10;

interface Sample {
  ttft: number;
  total: number;
}

async function timeStream(start: () => Promise<Response>, isText: (event: string, data: string) => boolean): Promise<Sample> {
  const t0 = performance.now();
  const res = await start();
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let ttft = NaN;
  for await (const ev of parseSse(res.body)) {
    if (Number.isNaN(ttft) && isText(ev.event, ev.data)) ttft = performance.now() - t0;
  }
  return { ttft, total: performance.now() - t0 };
}

const llm = new FakeLlm();
const provider = await serve((req) => llm.handle(req));
const worker = await startWorker({ LLM_BASE_URL: `${provider.url}/v1`, LLM_MODEL: "bench" });
const auth = { authorization: `Bearer ${worker.token}`, "content-type": "application/json" };

try {
  const direct: Sample[] = [];
  const gateway: Sample[] = [];
  const floor: number[] = [];
  let session = "";
  const body = JSON.stringify({ model: "bench", stream: true, messages: [{ role: "user", content: "benchmark turn" }] });
  for (let i = 0; i < WARMUP + TURNS; i++) {
    const d = await timeStream(
      () => fetch(`${provider.url}/v1/chat/completions`, { method: "POST", headers: auth, body }),
      (_e, data) => data !== "[DONE]" && (JSON.parse(data) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content !== undefined,
    );
    if (i % TURNS_PER_SESSION === 0) {
      const res = await fetch(`${worker.url}/v1/sessions`, { method: "POST", headers: auth, body: "{}" });
      session = ((await res.json()) as { session: { id: string } }).session.id;
    }
    const g = await timeStream(
      () => fetch(`${worker.url}/v1/sessions/${session}/turns`, { method: "POST", headers: auth, body: JSON.stringify({ content: `benchmark turn ${i}` }) }),
      (event) => event === "delta",
    );
    const f0 = performance.now();
    await (await fetch(`${worker.url}/health`)).text();
    const f = performance.now() - f0;
    if (i >= WARMUP) {
      direct.push(d);
      gateway.push(g);
      floor.push(f);
    }
  }
  const col = (xs: Sample[], k: keyof Sample) => xs.map((s) => s[k]);
  console.log(`bench/turn-overhead: ${TURNS} turns (after ${WARMUP} warm-up), ${TURNS_PER_SESSION} turns per session, wrangler dev on loopback`);
  console.log(summary("direct  time to first token", col(direct, "ttft")));
  console.log(summary("gateway time to first token", col(gateway, "ttft")));
  console.log(summary("floor: GET /health via wrangler dev", floor));
  console.log(summary("direct  total", col(direct, "total")));
  console.log(summary("gateway total", col(gateway, "total")));
  for (const p of [50, 99]) {
    const added = percentile(col(gateway, "ttft"), p) - percentile(col(direct, "ttft"), p);
    const ratio = percentile(col(gateway, "ttft"), p) / percentile(col(direct, "ttft"), p);
    const beyondFloor = percentile(col(gateway, "ttft"), p) - percentile(floor, p);
    console.log(`added time to first token at p${p}: ${ms(added)} (gateway/direct ${ratio.toFixed(2)}x; target ≤ ${p === 50 ? 5 : 20} ms); beyond the dev-server floor: ${ms(beyondFloor)}`);
  }
} finally {
  await worker.stop();
  await provider.close();
}
