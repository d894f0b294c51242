/**
 * bench/object-costs: what the storage primitives a delivery is made of cost the dev server's
 * one thread (issue 27, goal 4). Under `wrangler dev` the Worker, every Durable Object,
 * miniflare's D1 and SQLite share the main thread of one workerd process; at 50 in flight that
 * thread is the bottleneck (bench:webhooks), so a delivery's rate is about the inverse of the
 * thread time it takes. This measures that time per primitive, on a Worker of a few lines
 * written to a temp dir in the same run (no code of ours in it): a request that does nothing
 * (`/health`, the baseline), a call to an object already running, a call that makes a new
 * object (and one that also makes a table in it and writes a row), one SQL write, five in
 * one task (one implicit transaction) and five in five tasks (five commits; beside five tasks
 * that write nothing), an alarm set, an alarm set and deleted, a D1 insert, and the two
 * shapes of a delivery: a running
 * object that writes a row and calls another running one (an existing chat: Inbox, then
 * session), and the same with both objects new, each making its table (a new chat). For
 * each: requests per second at `--concurrency` in flight, and the main thread's CPU per
 * request from /proc (Linux), with its difference to `/health`'s, to the plain object call's
 * and (the new pair) to the running pair's, measured in the same run (`/health` again at the
 * end: the host's speed drifts).
 * Run: npm run bench:objects [-- --count 2000 --concurrency 50]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "../cli/local.ts";
import type { DevWorker } from "../test/support/wrangler-dev.ts";
import { benchWorker, fetchWithin, main, own, pool, workerdCpuMs } from "./lib.ts";

const { values } = parseArgs({ options: { count: { type: "string", default: "2000" }, concurrency: { type: "string", default: "50" } } });
const COUNT = Number(values.count);
const CONCURRENCY = Number(values.concurrency);
if (!Number.isInteger(COUNT) || COUNT < 100) throw new Error(`--count must be a whole number of at least 100 (got ${values.count})`);
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) throw new Error(`--concurrency must be a whole number of at least 1 (got ${values.concurrency})`);

/** Objects the "existing" calls spread over (each made during the warm-up). */
const EXISTING = 50;

const WORKER = `import { DurableObject } from "cloudflare:workers";
export class Probe extends DurableObject {
  async run(op) {
    const sql = this.ctx.storage.sql;
    if (op === "table") {
      sql.exec("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)");
      sql.exec("INSERT OR REPLACE INTO t VALUES ('a', 'b')");
    } else if (op === "sql") {
      sql.exec("INSERT OR REPLACE INTO t VALUES (?, 'b')", String(Math.random()));
    } else if (op === "alarm") {
      await this.ctx.storage.setAlarm(Date.now() + 600000 + Math.floor(Math.random() * 1000));
    } else if (op === "chain-new") {
      // A new chat's shape: this new object (its table, a row) hands on to another new one.
      sql.exec("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v TEXT)");
      sql.exec("INSERT OR REPLACE INTO t VALUES ('a', 'b')");
      await this.env.PROBE.getByName(crypto.randomUUID()).run("table");
    } else if (op.startsWith("chain-existing-")) {
      // An existing chat's shape: a running object writes a row and hands on to another running one.
      sql.exec("INSERT OR REPLACE INTO t VALUES ('a', 'b')");
      await this.env.PROBE.getByName("existing-" + op.slice("chain-existing-".length)).run("sql");
    } else if (op === "sql5") {
      for (let i = 0; i < 5; i++) sql.exec("INSERT OR REPLACE INTO t VALUES (?, 'b')", String(Math.random()));
    } else if (op === "sql5-commits") {
      // The same five writes, each in a task of its own: five implicit transactions, five commits.
      for (let i = 0; i < 5; i++) {
        sql.exec("INSERT OR REPLACE INTO t VALUES (?, 'b')", String(Math.random()));
        await scheduler.wait(0);
      }
    } else if (op === "wait5") {
      // Five tasks and no writes: what the commits' line pays for the tasks alone.
      for (let i = 0; i < 5; i++) await scheduler.wait(0);
    } else if (op === "alarm-delete") {
      await this.ctx.storage.setAlarm(Date.now() + 600000);
      await this.ctx.storage.deleteAlarm();
    }
    return 1;
  }
  async alarm() {}
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const op = url.searchParams.get("op") ?? "";
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname === "/d1") {
      await env.DB.prepare("INSERT INTO x (v) VALUES (?)").bind("a").run();
      return new Response("ok");
    }
    if (url.pathname === "/d1-setup") {
      await env.DB.prepare("CREATE TABLE IF NOT EXISTS x (id INTEGER PRIMARY KEY, v TEXT)").run();
      return new Response("ok");
    }
    const name = url.pathname === "/new" ? crypto.randomUUID() : "existing-" + url.searchParams.get("n");
    await env.PROBE.getByName(name).run(op);
    return new Response("ok");
  },
};
`;

/** The project's compatibility date and flags, so the probe runs on the same workerd settings. */
function projectCompatibility(): string {
  const toml = readFileSync(path.join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const flags = /^compatibility_flags\s*=\s*(\[[^\]]*\])/m.exec(toml)?.[1];
  if (!date) throw new Error("wrangler.toml has no compatibility_date");
  return `compatibility_date = "${date}"\n${flags ? `compatibility_flags = ${flags}\n` : ""}`;
}

function writeProbe(dir: string): string {
  writeFileSync(path.join(dir, "probe.js"), WORKER);
  const config = path.join(dir, "wrangler.toml");
  writeFileSync(
    config,
    `name = "object-costs-probe"\nmain = "probe.js"\n${projectCompatibility()}` +
      `[[durable_objects.bindings]]\nname = "PROBE"\nclass_name = "Probe"\n\n[[migrations]]\ntag = "v1"\nnew_sqlite_classes = ["Probe"]\n\n` +
      `[[d1_databases]]\nbinding = "DB"\ndatabase_name = "probe"\n`,
  );
  return config;
}

interface Figure {
  label: string;
  perSecond: number;
  cpuMs: number;
}

/** The main thread of the workerd running the probe's isolate: its CPU so far (ms, /proc). */
function threadCpuMs(w: DevWorker): number {
  const ms = workerdCpuMs(w, "isolate");
  if (ms === null) throw new Error("could not read the workerd thread's CPU from /proc");
  return ms;
}

async function measure(w: DevWorker, label: string, pathFor: (i: number) => string, count = COUNT): Promise<Figure> {
  const cpu0 = threadCpuMs(w);
  const t0 = performance.now();
  await pool(
    Array.from({ length: count }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const res = await fetchWithin(`${w.url}${pathFor(i)}`);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${label}: HTTP ${res.status}`);
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  return { label, perSecond: count / seconds, cpuMs: (threadCpuMs(w) - cpu0) / count };
}

main("bench/object-costs", 300_000, async () => {
  if (process.platform !== "linux") throw new Error("reads the thread's CPU from /proc: Linux only");
  // bench/lib.ts made TMPDIR memory (/dev/shm) where there is one, as for the other benchmarks' dev servers.
  const dir = mkdtempSync(path.join(tmpdir(), "hermes-edge-object-costs-"));
  own({ stop: async () => rmSync(dir, { recursive: true, force: true }), kill: () => rmSync(dir, { recursive: true, force: true }) });
  // The project's settings as blank vars (the probe reads none) and a throwaway local D1: as for every benchmark's dev server.
  const w = await benchWorker({}, { config: writeProbe(dir) });
  console.log(
    `bench/object-costs: ${COUNT} requests per line, ${CONCURRENCY} in flight, wrangler dev on loopback, storage in ${path.dirname(dir)}; CPU is the main thread of the workerd running the isolate (/proc)`,
  );
  // Warm-up: the dev server's first requests run slower; the D1 table and the existing objects are made here.
  await fetchWithin(`${w.url}/d1-setup`);
  await measure(w, "warm-up", () => "/health");
  await measure(w, "warm-up", (i) => `/existing?op=table&n=${i % EXISTING}`, EXISTING * 4);

  const lines: Figure[] = [];
  lines.push(await measure(w, "GET /health (nothing)", () => "/health"));
  const call = await measure(w, "call an object already running", (i) => `/existing?n=${i % EXISTING}`);
  lines.push(call);
  lines.push(await measure(w, "call a new object", () => "/new"));
  lines.push(await measure(w, "call a new object: a table, a row", () => "/new?op=table"));
  lines.push(await measure(w, "call an object: one SQL write", (i) => `/existing?op=sql&n=${i % EXISTING}`));
  lines.push(await measure(w, "call an object: five SQL writes, one task", (i) => `/existing?op=sql5&n=${i % EXISTING}`));
  lines.push(await measure(w, "call an object: five writes, five tasks", (i) => `/existing?op=sql5-commits&n=${i % EXISTING}`));
  lines.push(await measure(w, "call an object: five tasks, no writes", (i) => `/existing?op=wait5&n=${i % EXISTING}`));
  lines.push(await measure(w, "call an object: set its alarm", (i) => `/existing?op=alarm&n=${i % EXISTING}`));
  lines.push(await measure(w, "call an object: set and delete its alarm", (i) => `/existing?op=alarm-delete&n=${i % EXISTING}`));
  lines.push(await measure(w, "one D1 insert", () => "/d1"));
  const pair = await measure(w, "a running object, a row, a running one", (i) => `/existing?op=chain-existing-${(i + 1) % EXISTING}&n=${i % EXISTING}`);
  lines.push(pair);
  const newPair = await measure(w, "a new object, a table, a row, a new one", () => "/new?op=chain-new");
  lines.push(newPair);
  const after = await measure(w, "GET /health again", () => "/health");
  lines.push(after);

  const health = (lines[0]!.cpuMs + after.cpuMs) / 2;
  const rows = lines.map((f) => {
    const overCall = f.label.startsWith("call a") && f !== call ? `, +${(f.cpuMs - call.cpuMs).toFixed(2)} ms over a plain call` : "";
    const overPair = f === newPair ? `, +${(f.cpuMs - pair.cpuMs).toFixed(2)} ms over the running pair` : "";
    return `${f.label.padEnd(44)} ${f.perSecond.toFixed(0).padStart(5)}/s  ${f.cpuMs.toFixed(2).padStart(5)} ms of the thread (+${(f.cpuMs - health).toFixed(2)} over /health${overCall}${overPair}; ${(f.cpuMs / health).toFixed(2)}x)`;
  });
  console.log(rows.join("\n"));
  console.log(`/health: ${health.toFixed(2)} ms of the thread per request (the mean of the first and last lines)`);
});
