/**
 * bench/object-costs: what the storage primitives a delivery is made of cost the dev server's
 * one thread (issue 27, goal 4). Under `wrangler dev` the Worker, every Durable Object,
 * miniflare's D1 and SQLite share the main thread of one workerd process; at 50 in flight that
 * thread is the bottleneck (bench:webhooks), so a delivery's rate is about the inverse of the
 * thread time it takes. This measures that time per primitive, on a Worker of a few lines
 * written to a temp dir in the same run (no code of ours in it): a request that does nothing
 * (`/health`, the baseline), a call to an object already running, a call that makes a new
 * object (and one that also makes a table in it and writes a row), one SQL write, an alarm
 * set, an alarm set and deleted, a D1 insert, and the two shapes of a delivery: a running
 * object that writes a row and calls another running one (an existing chat: Inbox, then
 * session), and the same with both objects new, each making its table (a new chat). For each: requests per second at
 * `--concurrency` in flight, and the main thread's CPU per request from /proc (Linux), with
 * its difference to `/health`'s and to the plain object call's, measured in the same run
 * (`/health` again at the end: the host's speed drifts).
 * Run: npm run bench:objects [-- --count 2000 --concurrency 50]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "../cli/local.ts";
import { freePort } from "../test/support/http.ts";
import { fetchWithin, main, own, pool, within } from "./lib.ts";

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

/** wrangler dev on the probe, in its own process group (wrangler and its workerd), stopped with the benchmark. */
async function startProbe(dir: string): Promise<{ url: string; group: number }> {
  const [port, inspector] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      path.join(PROJECT_ROOT, "node_modules", "wrangler", "bin", "wrangler.js"),
      "dev",
      "--config",
      writeProbe(dir),
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--inspector-port",
      String(inspector),
      "--persist-to",
      path.join(dir, "state"),
      "--env-file",
      "/dev/null",
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: dir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: dir, WRANGLER_SEND_METRICS: "false", WRANGLER_LOG_PATH: dir, FORCE_COLOR: "0", NO_COLOR: "1" },
    },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const kill = () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone already
    }
  };
  own({ stop: async () => kill(), kill, output: () => out });
  if (child.pid === undefined) throw new Error("wrangler dev did not start");
  const url = `http://127.0.0.1:${port}`;
  await within(
    (async () => {
      for (;;) {
        if (child.exitCode !== null) throw new Error("wrangler dev exited early");
        const ok = await fetchWithin(`${url}/health`, {}, 2000).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return;
        await new Promise((r) => setTimeout(r, 100));
      }
    })(),
    60_000,
    "starting wrangler dev on the probe",
  );
  return { url, group: child.pid };
}

/**
 * CPU (ms, user + system) the main thread of the group's workerd that runs the isolate has used
 * so far (the one wrangler opened the inspector on; the other is wrangler's proxy in front).
 */
function mainThreadCpuMs(group: number): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== "workerd" || Number(f[2]) !== group) continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--inspector-addr")) continue;
      const main = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
      const m = main.slice(main.lastIndexOf(")") + 2).split(" ");
      ticks += Number(m[11]) + Number(m[12]);
    } catch {
      // gone meanwhile
    }
  }
  // USER_HZ is 100 on Linux whatever the kernel's own tick.
  return ticks * 10;
}

interface Figure {
  label: string;
  perSecond: number;
  cpuMs: number;
}

async function measure(base: string, group: number, label: string, pathFor: (i: number) => string, count = COUNT): Promise<Figure> {
  const cpu0 = mainThreadCpuMs(group);
  const t0 = performance.now();
  await pool(
    Array.from({ length: count }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const res = await fetchWithin(`${base}${pathFor(i)}`);
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${label}: HTTP ${res.status}`);
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  return { label, perSecond: count / seconds, cpuMs: (mainThreadCpuMs(group) - cpu0) / count };
}

main("bench/object-costs", 300_000, async () => {
  if (process.platform !== "linux") throw new Error("reads each thread's CPU from /proc: Linux only");
  // bench/lib.ts made TMPDIR memory (/dev/shm) where there is one, as for the other benchmarks' dev servers.
  const dir = mkdtempSync(path.join(tmpdir(), "hermes-edge-object-costs-"));
  own({ stop: async () => rmSync(dir, { recursive: true, force: true }), kill: () => rmSync(dir, { recursive: true, force: true }) });
  const { url, group } = await startProbe(dir);
  console.log(
    `bench/object-costs: ${COUNT} requests per line, ${CONCURRENCY} in flight, wrangler dev on loopback, storage in ${path.dirname(dir)}; CPU is the main thread of the workerd running the isolate (/proc)`,
  );
  // Warm-up: the dev server's first requests run slower; the D1 table and the existing objects are made here.
  await fetchWithin(`${url}/d1-setup`);
  await measure(url, group, "warm-up", () => "/health");
  await measure(url, group, "warm-up", (i) => `/existing?op=table&n=${i % EXISTING}`, EXISTING * 4);

  const lines: Figure[] = [];
  lines.push(await measure(url, group, "GET /health (nothing)", () => "/health"));
  const call = await measure(url, group, "call an object already running", (i) => `/existing?n=${i % EXISTING}`);
  lines.push(call);
  lines.push(await measure(url, group, "call a new object", () => "/new"));
  lines.push(await measure(url, group, "call a new object: a table, a row", () => "/new?op=table"));
  lines.push(await measure(url, group, "call an object: one SQL write", (i) => `/existing?op=sql&n=${i % EXISTING}`));
  lines.push(await measure(url, group, "call an object: set its alarm", (i) => `/existing?op=alarm&n=${i % EXISTING}`));
  lines.push(await measure(url, group, "call an object: set and delete its alarm", (i) => `/existing?op=alarm-delete&n=${i % EXISTING}`));
  lines.push(await measure(url, group, "one D1 insert", () => "/d1"));
  const pair = await measure(
    url,
    group,
    "a running object, a row, a running one",
    (i) => `/existing?op=chain-existing-${(i + 1) % EXISTING}&n=${i % EXISTING}`,
  );
  lines.push(pair);
  const newPair = await measure(url, group, "a new object, a table, a row, a new one", () => "/new?op=chain-new");
  lines.push(newPair);
  const after = await measure(url, group, "GET /health again", () => "/health");
  lines.push(after);

  const health = (lines[0]!.cpuMs + after.cpuMs) / 2;
  const rows = lines.map((f) => {
    const overCall = f.label.startsWith("call a") && f !== call ? `, +${(f.cpuMs - call.cpuMs).toFixed(2)} ms over a plain call` : "";
    const overPair = f === newPair ? `, +${(f.cpuMs - pair.cpuMs).toFixed(2)} ms over the running pair` : "";
    return `${f.label.padEnd(42)} ${f.perSecond.toFixed(0).padStart(5)}/s  ${f.cpuMs.toFixed(2).padStart(5)} ms of the thread (+${(f.cpuMs - health).toFixed(2)} over /health${overCall}${overPair}; ${(f.cpuMs / health).toFixed(2)}x)`;
  });
  console.log(rows.join("\n"));
  console.log(`/health: ${health.toFixed(2)} ms of the thread per request (the mean of the first and last lines)`);
});
