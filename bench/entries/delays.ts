/**
 * The latency simulation: every D1 call and every Durable Object stub call (made by the
 * Worker or by an object) waits a configurable time, half before it goes out and half
 * before its answer comes back, as a round trip over a network would.
 * `BENCH_D1_DELAY_MS` and `BENCH_DO_DELAY_MS`: unset both (and `BENCH_STATS`), and env is
 * the production one.
 */
import { interceptEnv, type Around } from "./intercept.ts";
import { countingAround } from "./stats.ts";

/** The bench entry's own settings (never in production's Env). */
export interface BenchVars {
  BENCH_D1_DELAY_MS?: string;
  BENCH_DO_DELAY_MS?: string;
  /** The relay baseline: POST each inbound frame here (see push-relay.ts). */
  BENCH_RELAY_PUSH_URL?: string;
  /** The handoff baseline: claims wait for the next tick of a watcher polling this often (see polling-handoff.ts). */
  BENCH_HANDOFF_POLL_MS?: string;
  /** `1`: count storage statements and remote calls per side (see stats.ts). */
  BENCH_STATS?: string;
  /** `1`: a message goes from the Worker straight to a new session object (see no-inbox.ts). */
  BENCH_NO_INBOX?: string;
}

/** Is `BENCH_STATS` on? */
export const statsOn = (env: object) => (env as BenchVars).BENCH_STATS === "1";

/** A non-negative number of milliseconds from a bench var; null when unset. */
export function benchMs(v: string | undefined): number | null {
  if (v === undefined || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

const arounds = new Map<string, Around>();

/** One `Around` per side and setting (interceptEnv caches the wrapped env by it). */
function aroundFor(who: string, d1: number, object: number, stats: boolean): Around {
  const key = `${who}|${d1}|${object}|${stats}`;
  let around = arounds.get(key);
  if (!around) {
    const delay: Around = async (call, run) => {
      const ms = call.kind === "d1" ? d1 : object;
      await sleep(ms / 2);
      const result = await run();
      await sleep(ms / 2);
      return result;
    };
    around = stats ? countingAround(who, delay) : delay;
    arounds.set(key, around);
  }
  return around;
}

/**
 * `env` as `who` (the Worker, or an object class) sees it in the benchmarks: delayed
 * bindings when a delay is set (even 0: the wrapper's own cost then shows), counted ones
 * with `BENCH_STATS=1`; production's env otherwise.
 */
export function benchEnv<E extends object>(env: E & BenchVars, who: string): E {
  const d1 = benchMs(env.BENCH_D1_DELAY_MS);
  const object = benchMs(env.BENCH_DO_DELAY_MS);
  if (d1 === null && object === null && !statsOn(env)) return env;
  return interceptEnv(env, aroundFor(who, d1 ?? 0, object ?? 0, statsOn(env)));
}
