/**
 * What the benchmarks share: a bounded lifecycle (every wait has a limit; wrangler dev and
 * the fakes are cleaned up on exit, error and SIGINT/SIGTERM), the Workers they run
 * (production's, or the bench wrapper entry), loopback fakes, signed deliveries, and the
 * figures (percentiles, ratios, fitted slopes).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "../cli/local.ts";
import { parseSse } from "../workers/agent/index.ts";
import { platformVars } from "../test/support/e2e.ts";
import { FakeLlm } from "../test/support/fake-llm.ts";
import { FakeDiscord, FakeSlack, FakeTelegram, type ApiCall } from "../test/support/fake-platforms.ts";
import { FakeHomeserver } from "../test/support/fake-matrix.ts";
import { FakeWhatsApp } from "../test/support/fake-whatsapp.ts";
import { mx } from "../test/support/matrix-fixtures.ts";
import { dc, sl, tg } from "../test/support/fixtures.ts";
import { serve, type LoopbackServer } from "../test/support/http.ts";
import { discordHeaders, matrixHeaders, slackHeaders, telegramHeaders, whatsappHeaders } from "../test/support/signing.ts";
import { wa } from "../test/support/whatsapp-fixtures.ts";
import { memoryTmpBase } from "../test/support/temp.ts";
import { startWorker, type DevWorker } from "../test/support/wrangler-dev.ts";

// The dev servers' storage (and wrangler's own files) in memory where there is a /dev/shm, unless
// TMPDIR says otherwise: on this machine's ext4, creating and committing each new object's SQLite
// file blocked the isolate's thread, and a new chat's sampled CPU read 16.9 ms instead of 10.0
// (docs/benchmarks.md). In production an object's storage is not a local file either.
if (!process.env.TMPDIR) process.env.TMPDIR = memoryTmpBase();

// ---- Lifecycle -------------------------------------------------------------------------

interface Resource {
  stop(): Promise<void>;
  /** Synchronous last resort, for process exit. */
  kill(): void;
  /** What it printed (wrangler dev), shown when the benchmark fails. */
  output?(): string;
}

const resources = new Set<Resource>();

/** Registers something to stop when the benchmark ends, however it ends; returns a way to forget it. */
export function own(r: Resource): () => void {
  resources.add(r);
  return () => resources.delete(r);
}

async function stopAll(): Promise<void> {
  const all = [...resources].reverse();
  resources.clear();
  await within(Promise.allSettled(all.map((r) => r.stop())), 15_000, "stopping wrangler dev and the fakes").catch(() => all.forEach((r) => r.kill()));
}

/** A limit on one wait: rejects with `what` when `promise` has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${(ms / 1000).toFixed(1)} s`)), ms)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Polls `done` every few ms until it is true, for at most `ms`. */
export async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${(ms / 1000).toFixed(1)} s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/**
 * Runs a benchmark: the whole run within `limitMs`, a clear error (exit 1) instead of a
 * hang or a stack of unhandled rejections, and everything it started stopped on the way
 * out, also on SIGINT/SIGTERM and on process exit.
 */
export function main(name: string, limitMs: number, body: () => Promise<void>): void {
  process.once("exit", () => {
    for (const r of resources) r.kill();
  });
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.once(sig, () => {
      console.error(`\n${name}: ${sig}, stopping`);
      void stopAll().finally(() => process.exit(sig === "SIGINT" ? 130 : 143));
    });
  }
  within(body(), limitMs, `${name}: the whole run`).then(
    () => stopAll().then(() => process.exit(0)),
    (err: unknown) => {
      console.error(`${name}: error: ${err instanceof Error ? err.message : String(err)}`);
      for (const r of resources) {
        const out = r.output?.().trim();
        if (out) console.error(`--- the last lines wrangler dev printed:\n${out.split("\n").slice(-25).join("\n")}`);
      }
      return stopAll().then(() => process.exit(1));
    },
  );
}

/** A fetch that gives up after `ms`. */
export function fetchWithin(url: string, init: RequestInit = {}, ms = 15_000): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
}

// ---- Workers ---------------------------------------------------------------------------

/** The bench wrapper's config, written next to its entry from wrangler.toml (so it never drifts). */
export const BENCH_CONFIG = path.join(PROJECT_ROOT, "bench", "wrangler.bench.toml");

/**
 * Writes bench/wrangler.bench.toml: wrangler.toml with `main` pointed at the bench entry
 * (bench/entries/bench.ts) and its other paths rebased to bench/.
 */
export function writeBenchConfig(): string {
  const source = readFileSync(path.join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  // Paths in wrangler.toml are relative to it: rebased to bench/ (wrangler runs the
  // console's build command from its own working directory, the project's root).
  const rebased = source.replace(/^(\s*(?:main|migrations_dir|directory|watch_dir)\s*=\s*)"([^"]+)"/gm, (_m, key: string, p: string) => {
    const target = key.trim().startsWith("main") ? path.join(PROJECT_ROOT, "bench", "entries", "bench.ts") : path.join(PROJECT_ROOT, p);
    return `${key}"${path.relative(path.dirname(BENCH_CONFIG), target)}"`;
  });
  writeFileSync(BENCH_CONFIG, `# Generated by bench/lib.ts from wrangler.toml: the benchmarks' wrapper entry. Edit wrangler.toml instead.\n${rebased}`);
  return BENCH_CONFIG;
}

/**
 * A `wrangler dev` for a benchmark, stopped with it: production's Worker, (`wrapper`) the
 * bench entry, whose `BENCH_*` vars switch on delays and baselines, or (`config`) another
 * Worker altogether (bench/object-costs' probe).
 */
export async function benchWorker(vars: Record<string, string>, opts: { wrapper?: boolean; config?: string } = {}): Promise<DevWorker> {
  let forget: () => void = () => undefined;
  const config = opts.config ?? (opts.wrapper ? writeBenchConfig() : undefined);
  const worker = await within(
    startWorker(vars, {
      ...(config ? { config } : {}),
      onSpawn: (kill) => (forget = own({ stop: async () => kill(), kill })),
    }),
    90_000,
    "starting wrangler dev",
  );
  forget();
  const forgetStarted = own({ stop: () => worker.stop(), kill: () => worker.kill(), output: () => worker.output() });
  return {
    ...worker,
    stop: async () => {
      forgetStarted();
      await worker.stop();
    },
  };
}

/** A process's command line ("" once it is gone). */
function cmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/**
 * CPU time (user + system, ms) the dev server's workerd processes have used so far, from
 * /proc (Linux; null elsewhere or once stopped): the isolate that runs the Worker and every
 * object, their SQLite, and the local D1. Real CPU, so unlike a sampled profile it does not
 * grow when the machine is loaded and the process waits for a core. `"isolate"`: only the
 * main thread of the process running the Worker's isolate (where miniflare's own workers and
 * workerd's I/O run too), without wrangler's proxy in front of it and without V8's helper
 * threads: an upper bound for a profile of the isolate.
 */
export function workerdCpuMs(w: DevWorker, which: "all" | "isolate" = "all"): number | null {
  const group = w.processGroup;
  if (group === null) return null;
  let ticks = 0;
  let found = false;
  try {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        continue; // gone meanwhile
      }
      // pid (comm) state ppid pgrp …; comm may hold spaces, so fields are counted after its ")".
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (comm !== "workerd" || Number(f[2]) !== group) continue;
      // The process running the Worker's isolate is the one wrangler opened the inspector on
      // (the other is wrangler's proxy in front of it).
      if (which === "isolate") {
        if (!cmdline(pid).includes("--inspector-addr")) continue;
        // Its main thread, where every isolate runs (not V8's helper threads or the profiler's).
        const main = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
        const m = main.slice(main.lastIndexOf(")") + 2).split(" ");
        ticks += Number(m[11]) + Number(m[12]);
        found = true;
        continue;
      }
      ticks += Number(f[11]) + Number(f[12]);
      found = true;
    }
  } catch {
    return null;
  }
  // Clock ticks are 1/100 s on Linux.
  return found ? ticks * 10 : null;
}

/** Calls the Worker's API as the CLI does (bearer token, JSON), within a limit. */
export async function api<T>(w: DevWorker, method: string, route: string, body?: unknown, ms = 15_000): Promise<T> {
  const res = await fetchWithin(
    `${w.url}${route}`,
    {
      method,
      headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    },
    ms,
  );
  if (!res.ok) throw new Error(`${method} ${route}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as T;
}

/** Time of one do-nothing request (GET /health) through the same dev server: the floor. */
export async function health(w: DevWorker): Promise<number> {
  const t0 = performance.now();
  const res = await fetchWithin(`${w.url}/health`);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET /health: HTTP ${res.status}`);
  return performance.now() - t0;
}

/** A turn's time to its first `delta` and to its end (an SSE reply read as the CLI reads it). */
export async function timeTurn(
  start: () => Promise<Response>,
  isText: (event: string, data: string) => boolean,
  ms = 30_000,
): Promise<{ ttft: number; total: number }> {
  const t0 = performance.now();
  const read = async () => {
    const res = await start();
    if (!res.ok || !res.body) throw new Error(`turn: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    let ttft = NaN;
    for await (const ev of parseSse(res.body)) if (Number.isNaN(ttft) && isText(ev.event, ev.data)) ttft = performance.now() - t0;
    if (Number.isNaN(ttft)) throw new Error("turn: the stream ended without any text");
    return { ttft, total: performance.now() - t0 };
  };
  return within(read(), ms, "a turn");
}

/** Starts a turn through the Worker's API. */
export function postTurn(w: DevWorker, sessionId: string, content: string): Promise<Response> {
  return fetchWithin(
    `${w.url}/v1/sessions/${sessionId}/turns`,
    { method: "POST", headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" }, body: JSON.stringify({ content }) },
    30_000,
  );
}

/** A handoff's times from the moment its POST went out: to the 202, to `running`, to `completed`. */
export interface HandoffTimes {
  accepted: number;
  running: number;
  completed: number;
}

/**
 * Hands session `id` off to `platform` and follows it as the CLI does (long-polls while
 * the state stays the same), every wait bounded; throws if it fails.
 */
export async function handoffTimes(w: DevWorker, id: string, platform: string): Promise<HandoffTimes> {
  const t0 = performance.now();
  await api(w, "POST", `/v1/sessions/${id}/handoff`, { platform });
  const accepted = performance.now() - t0;
  // "none" first: a baseline may store the request only later (see bench/entries/polling-handoff.ts).
  let state = "none";
  let running = NaN;
  for (let polls = 0; state !== "completed"; polls++) {
    if (polls > 20) throw new Error(`handoff of ${id} still ${state} after ${polls} long-polls`);
    const { handoff } = await api<{ handoff: { state: string; error: string | null } | null }>(w, "GET", `/v1/sessions/${id}/handoff?wait=10&state=${state}`);
    const now = handoff?.state ?? "none";
    if (now === "failed") throw new Error(`handoff of ${id} failed: ${handoff?.error}`);
    if (Number.isNaN(running) && (now === "running" || now === "completed")) running = performance.now() - t0;
    state = now;
  }
  return { accepted, running, completed: performance.now() - t0 };
}

/** A new CLI session's id. */
export async function newSession(w: DevWorker, title?: string): Promise<string> {
  return (await api<{ session: { id: string } }>(w, "POST", "/v1/sessions", title ? { title } : {})).session.id;
}

// ---- Fakes and deliveries --------------------------------------------------------------

/** The model and the platforms, faked on loopback, and the Worker settings pointing at them. */
export interface Fakes {
  llm: FakeLlm;
  telegram: FakeTelegram;
  discord: FakeDiscord;
  slack: FakeSlack;
  whatsapp: FakeWhatsApp;
  matrix: FakeHomeserver;
  urls: { llm: string; telegram: string; discord: string; slack: string; whatsapp: string; matrix: string };
  /** Every platform enabled for every user, the model at the fake. */
  vars: Record<string, string>;
}

export async function startFakes(): Promise<Fakes> {
  const llm = new FakeLlm();
  const telegram = new FakeTelegram();
  const discord = new FakeDiscord();
  const slack = new FakeSlack();
  const whatsapp = new FakeWhatsApp();
  const matrix = new FakeHomeserver();
  matrix.unknownRoomsAreDms = true;
  const servers: LoopbackServer[] = await Promise.all([llm, telegram, discord, slack, whatsapp, matrix].map((f) => serve((r) => f.handle(r))));
  for (const s of servers) own({ stop: () => s.close(), kill: () => undefined });
  const [l, t, d, s, w, m] = servers.map((x) => x.url) as [string, string, string, string, string, string];
  const urls = { llm: l, telegram: t, discord: d, slack: s, whatsapp: w, matrix: m };
  const everyone = {
    TELEGRAM_ALLOWED_USERS: "*",
    DISCORD_ALLOWED_USERS: "*",
    SLACK_ALLOWED_USERS: "*",
    WHATSAPP_ALLOWED_USERS: "*",
    MATRIX_ALLOWED_USERS: "*",
  };
  const vars = { ...platformVars(urls), OFFLINE_STREAM_DELAY_MS: "0", ...everyone };
  return { llm, telegram, discord, slack, whatsapp, matrix, urls, vars };
}

export const PLATFORMS = ["telegram", "discord", "slack", "whatsapp", "matrix"] as const;
export type Platform = (typeof PLATFORMS)[number];

/** A signed webhook delivery and how to recognise its reply at the fake platform API. */
export interface Delivery {
  platform: Platform;
  /** The chat number it was made for. */
  chat: number;
  body: string;
  headers: Record<string, string>;
  isReply: (c: ApiCall) => boolean;
  /** Where and how it is sent, when not `POST /webhooks/<platform>` (a Matrix transaction is a PUT below it). */
  path?: string;
  method?: string;
}

/**
 * A message from chat number `chat` (each number its own chat, user and session key), or
 * a command: Telegram `/stop` is `tg.command`. Every delivery has its own delivery id.
 */
export async function delivery(platform: Platform, chat: number, text = `bench ${chat}`): Promise<Delivery> {
  switch (platform) {
    case "telegram": {
      const id = 500_000 + chat;
      const entities = text.startsWith("/") ? { entities: [{ type: "bot_command", offset: 0, length: text.split(" ")[0]!.length }] } : {};
      return {
        platform,
        chat,
        body: JSON.stringify(tg.dm(text, id, entities)),
        headers: telegramHeaders(),
        isReply: (c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === id,
      };
    }
    case "discord": {
      const interaction = text.startsWith("/")
        ? dc.command(text.slice(1), {}, { userId: String(800_000 + chat), channelId: String(900_000 + chat) })
        : dc.command("ask", { prompt: text }, { userId: String(800_000 + chat), channelId: String(900_000 + chat) });
      const body = JSON.stringify(interaction);
      return {
        platform,
        chat,
        body,
        headers: await discordHeaders(body),
        isReply: (c) => c.method === "PATCH" && c.path.includes(`/${interaction.token}/messages/@original`),
      };
    }
    case "slack": {
      const channel = `D${700_000 + chat}`;
      const body = JSON.stringify(sl.dm(text, `U${700_000 + chat}`, channel));
      return { platform, chat, body, headers: await slackHeaders(body), isReply: (c) => c.path.endsWith("/chat.postMessage") && c.body.channel === channel };
    }
    case "whatsapp": {
      // A batch of one message, as Meta delivers a DM; the reply is a text message to the sender (not a read receipt).
      const waId = String(15_550_000_000 + chat);
      const body = JSON.stringify(wa.dm(waId, text));
      return {
        platform,
        chat,
        body,
        headers: await whatsappHeaders(body),
        isReply: (c) => c.path.endsWith("/messages") && c.body.to === waId && c.body.type === "text",
      };
    }
    case "matrix": {
      // A transaction of one message in a room of its own (the fake homeserver makes each a DM); the reply is a new message there, not an edit.
      const room = `!bench${chat}:example.org`;
      const event = mx.message(room, `@user${chat}:example.org`, text, { eventId: `$bench${chat}-${performance.now()}-${Math.random()}` });
      const at = `/rooms/${encodeURIComponent(room)}/send/`;
      return {
        platform,
        chat,
        body: mx.txn([event]),
        headers: matrixHeaders(),
        path: `/webhooks/matrix/_matrix/app/v1/transactions/${encodeURIComponent(String(event.event_id))}`,
        method: "PUT",
        isReply: (c) =>
          c.path.includes(at) &&
          (c.body["m.relates_to"] as { rel_type?: unknown } | undefined)?.rel_type !== "m.replace" &&
          (c.answer as { fresh?: unknown } | null)?.fresh === undefined,
      };
    }
  }
}

/** Posts a delivery; its time to the answer (which must be a 2xx). */
export async function post(w: DevWorker, d: Delivery): Promise<number> {
  const t0 = performance.now();
  const res = await fetchWithin(`${w.url}${d.path ?? `/webhooks/${d.platform}`}`, { method: d.method ?? "POST", headers: d.headers, body: d.body });
  const answer = await res.text();
  const took = performance.now() - t0;
  if (res.status < 200 || res.status > 299) throw new Error(`${d.platform} webhook: HTTP ${res.status} ${answer.slice(0, 300)}`);
  return took;
}

/** The fake of a platform. */
export function fakeOf(f: Fakes, p: Platform): FakeTelegram | FakeDiscord | FakeSlack | FakeWhatsApp | FakeHomeserver {
  return p === "telegram" ? f.telegram : p === "discord" ? f.discord : p === "slack" ? f.slack : p === "whatsapp" ? f.whatsapp : f.matrix;
}

/**
 * Waits (bounded) for the reply to a delivery at its fake platform API: the first call
 * to its chat made after the fake had seen `from` calls (its `calls.length` before).
 */
export function reply(f: Fakes, d: Delivery, from = 0, ms = 30_000): Promise<ApiCall> {
  const fake = fakeOf(f, d.platform);
  return within(
    fake.waitFor((c) => d.isReply(c) && fake.calls.indexOf(c) >= from),
    ms,
    `the ${d.platform} reply`,
  );
}

/** Posts a delivery and waits for its reply; the time to the 2xx. */
export async function exchange(w: DevWorker, f: Fakes, d: Delivery): Promise<number> {
  const from = fakeOf(f, d.platform).calls.length;
  const took = await post(w, d);
  await reply(f, d, from);
  return took;
}

/** Runs `fn` over `items` with `n` in flight. */
export async function pool<T>(items: readonly T[], n: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// ---- Figures ---------------------------------------------------------------------------

/** Percentile of a sample (nearest rank). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

export const ms = (x: number) => `${x.toFixed(2)} ms`;

/** `a / b` as "1.23x". */
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** One row of figures: p50, p99, mean; `base` adds the p50 ratio against it. */
export function summary(label: string, xs: readonly number[], base?: readonly number[]): string {
  const row = `${label.padEnd(40)} p50 ${ms(percentile(xs, 50)).padStart(10)}   p99 ${ms(percentile(xs, 99)).padStart(10)}   mean ${ms(mean(xs)).padStart(10)}   n=${xs.length}`;
  return base ? `${row}   p50 ${ratio(percentile(xs, 50), percentile(base, 50))} the floor` : row;
}
