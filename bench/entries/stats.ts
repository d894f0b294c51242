/**
 * `BENCH_STATS=1`: counts, per object class and per statement, what each Durable Object
 * runs on its own SQLite (and the time it takes, by `performance.now()`, which wrangler
 * dev advances in ms steps: summed over many statements the steps average out), and the
 * D1 and object calls each side makes. Under wrangler dev the Worker and every object share
 * one isolate, so one module-level table sees them all; the bench entry serves it at
 * `GET /__bench/stats` and clears it at `DELETE /__bench/stats`.
 */
import type { Around } from "./intercept.ts";

/** Count and time of one kind of operation. */
export interface Tally {
  n: number;
  ms: number;
}

const table = new Map<string, Map<string, Tally>>();

function add(who: string, what: string, ms: number): void {
  let byWhat = table.get(who);
  if (!byWhat) table.set(who, (byWhat = new Map()));
  const t = byWhat.get(what) ?? { n: 0, ms: 0 };
  t.n++;
  t.ms += ms;
  byWhat.set(what, t);
}

/** The table: side → operation → tally. */
export function statsJson(): Record<string, Record<string, Tally>> {
  return Object.fromEntries([...table].map(([who, m]) => [who, Object.fromEntries(m)]));
}

export function resetStats(): void {
  table.clear();
}

/** A cursor whose reading (where SQLite steps through the rows) is timed too. */
function timedCursor<C extends object>(cursor: C, who: string, what: string, spent: number): C {
  add(who, what, spent);
  return new Proxy(cursor, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return Reflect.apply(v, target, args);
        } finally {
          add(who, `${what} (reading rows)`, performance.now() - t0);
        }
      };
    },
  });
}

const counted = new WeakSet<object>();

/**
 * Counts `ctx.storage.sql.exec`, `transactionSync` and the alarm calls under `who`. The
 * runtime refuses anything but the real state object in a Durable Object's constructor,
 * so these are patched onto this object's own storage (a bench-only instance), not proxied.
 */
export function countedState(ctx: DurableObjectState, who: string): DurableObjectState {
  const { storage } = ctx;
  if (counted.has(storage)) return ctx;
  counted.add(storage);
  const sql = storage.sql;
  const exec = sql.exec;
  sql.exec = ((query: string, ...params: SqlStorageValue[]) => {
    const t0 = performance.now();
    const cursor = exec.call(sql, query, ...params);
    return timedCursor(cursor, who, `sql ${query.replace(/\s+/g, " ").slice(0, 110)}`, performance.now() - t0);
  }) as typeof sql.exec;
  const transactionSync = storage.transactionSync;
  storage.transactionSync = <T>(fn: () => T): T => {
    add(who, "transactionSync", 0);
    return transactionSync.call(storage, fn) as T;
  };
  const getAlarm = storage.getAlarm;
  storage.getAlarm = (...args: Parameters<typeof getAlarm>) => {
    add(who, "storage.getAlarm", 0);
    return getAlarm.apply(storage, args);
  };
  const setAlarm = storage.setAlarm;
  storage.setAlarm = (...args: Parameters<typeof setAlarm>) => {
    add(who, "storage.setAlarm", 0);
    return setAlarm.apply(storage, args);
  };
  return ctx;
}

/** Counts the remote calls made by `who` (and the time until they answered) before handing on to `inner`. */
export function countingAround(who: string, inner: Around | null): Around {
  return async (call, run) => {
    const t0 = performance.now();
    try {
      return inner ? await inner(call, run) : await run();
    } finally {
      add(who, call.kind === "d1" ? `D1 ${call.method} ${(call.sql ?? "").slice(0, 90)}` : `call ${call.binding}.${call.method}`, performance.now() - t0);
    }
  };
}

/** Times a synchronous stretch (`fn`) under `who`/`what`. */
export function timed<T>(who: string, what: string, fn: () => T): T {
  const t0 = performance.now();
  try {
    return fn();
  } finally {
    add(who, what, performance.now() - t0);
  }
}

const envs = new WeakSet<object>();

/**
 * Notes whether `env` is an object this isolate has seen before: the per-env caches
 * (settings, adapters) only help when the runtime hands the same object again.
 */
export function noteEnv(who: string, env: object): void {
  add(who, envs.has(env) ? "env: the same object as before" : "env: a new object", 0);
  envs.add(env);
}
