/**
 * The latency simulation: every D1 call and every Durable Object stub call (made by the
 * Worker or by an object) waits a configurable time, half before it goes out and half
 * before its answer comes back, as a round trip over a network would.
 * `BENCH_D1_DELAY_MS` and `BENCH_DO_DELAY_MS`: unset both, and env is the production one.
 */
import { interceptEnv, type Around } from "./intercept.ts";

/** The bench entry's own settings (never in production's Env). */
export interface BenchVars {
  BENCH_D1_DELAY_MS?: string;
  BENCH_DO_DELAY_MS?: string;
  /** The relay baseline: POST each inbound frame here (see push-relay.ts). */
  BENCH_RELAY_PUSH_URL?: string;
  /** The handoff baseline: claims wait for the next tick of a watcher polling this often (see polling-handoff.ts). */
  BENCH_HANDOFF_POLL_MS?: string;
}

/** A non-negative number of milliseconds from a bench var; null when unset. */
export function benchMs(v: string | undefined): number | null {
  if (v === undefined || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

const arounds = new Map<string, Around>();

/** One `Around` per pair of delays (interceptEnv caches the wrapped env by it). */
function delaying(d1: number, object: number): Around {
  const key = `${d1}/${object}`;
  let around = arounds.get(key);
  if (!around) {
    around = async (call, run) => {
      const ms = call.kind === "d1" ? d1 : object;
      await sleep(ms / 2);
      const result = await run();
      await sleep(ms / 2);
      return result;
    };
    arounds.set(key, around);
  }
  return around;
}

/** `env` with delayed bindings when a delay is set (even 0: the wrapper's own cost then shows). */
export function delayedEnv<E extends object>(env: E & BenchVars): E {
  const d1 = benchMs(env.BENCH_D1_DELAY_MS);
  const object = benchMs(env.BENCH_DO_DELAY_MS);
  if (d1 === null && object === null) return env;
  return interceptEnv(env, delaying(d1 ?? 0, object ?? 0));
}
