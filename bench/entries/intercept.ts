/**
 * Wraps a Worker's remote bindings (D1, Durable Object namespaces) so that every call
 * that leaves the isolate goes through one function: the round-trip test records them,
 * the latency benchmark delays them. Local work (preparing and binding a statement,
 * making an object id or stub) passes through untouched; only what goes over the wire is
 * a call: a D1 statement run (`run`/`all`/`first`/`raw`), `batch`, `exec`, and every
 * method called on a Durable Object stub (RPC, and `fetch`).
 * Bench and test support only: production code never sees this.
 */

/** One remote call. */
export interface RemoteCall {
  /** The binding's name in env (`DB`, `INBOX`, …). */
  binding: string;
  /** `fetch`: an outbound HTTP request (recorded by the round-trip test, not by these wrappers). */
  kind: "d1" | "object" | "fetch";
  /** The D1 method, the stub's RPC method, or the fetched origin. */
  method: string;
  /** D1: the SQL (statements of a batch joined with `;`). */
  sql?: string;
  /** D1: the values bound to it. */
  params?: unknown[];
}

/** Runs one remote call; must call `run` exactly once and return what it gives. */
export type Around = <T>(call: RemoteCall, run: () => Promise<T>) => Promise<T>;

/** Which env names are which kind of binding. */
export interface BindingNames {
  d1: readonly string[];
  objects: readonly string[];
}

/** The Worker's own remote bindings (wrangler.toml). */
export const WORKER_BINDINGS: BindingNames = { d1: ["DB"], objects: ["SESSION_AGENT", "INBOX", "RELAY"] };

const D1_RUNS = new Set(["run", "all", "first", "raw"]);

interface StatementInfo {
  real: D1PreparedStatement;
  sql: string;
  params: unknown[];
}

/** A D1 database whose statements report their runs to `around`. */
export function interceptD1(db: D1Database, binding: string, around: Around): D1Database {
  const info = new WeakMap<object, StatementInfo>();
  const unwrap = (s: D1PreparedStatement): StatementInfo => info.get(s) ?? { real: s, sql: "?", params: [] };
  const statement = (s: StatementInfo): D1PreparedStatement => {
    const proxy = new Proxy(s.real, {
      get(target, prop) {
        if (prop === "bind") return (...values: unknown[]) => statement({ real: target.bind(...values), sql: s.sql, params: values });
        if (typeof prop === "string" && D1_RUNS.has(prop)) {
          return (...args: unknown[]) =>
            around({ binding, kind: "d1", method: prop, sql: s.sql, params: s.params }, () =>
              Reflect.apply(Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>, target, args),
            );
        }
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    info.set(proxy, s);
    return proxy;
  };
  const batch = (real: { batch: D1Database["batch"] }) => (stmts: D1PreparedStatement[]) => {
    const parts = stmts.map(unwrap);
    return around({ binding, kind: "d1", method: "batch", sql: parts.map((p) => p.sql).join("; "), params: parts.flatMap((p) => p.params) }, () =>
      real.batch(parts.map((p) => p.real)),
    );
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => statement({ real: target.prepare(sql), sql, params: [] });
      if (prop === "batch") return batch(target);
      if (prop === "exec") return (sql: string) => around({ binding, kind: "d1", method: "exec", sql }, () => target.exec(sql));
      if (prop === "dump")
        return () => around({ binding, kind: "d1", method: "dump" }, () => Reflect.apply(Reflect.get(target, "dump") as () => Promise<unknown>, target, []));
      if (prop === "withSession") {
        return (...args: Parameters<D1Database["withSession"]>) => {
          const session = target.withSession(...args);
          return new Proxy(session, {
            get(t, p) {
              if (p === "prepare") return (sql: string) => statement({ real: t.prepare(sql), sql, params: [] });
              if (p === "batch") return batch(t);
              const v: unknown = Reflect.get(t, p);
              return typeof v === "function" ? v.bind(t) : v;
            },
          });
        };
      }
      const v: unknown = Reflect.get(target, prop);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** Stub members that are not remote calls. */
const STUB_LOCAL = new Set(["id", "name", "then"]);

/** A stub whose every method call (RPC, `fetch`) goes through `around`. */
export function interceptStub<S extends object>(stub: S, binding: string, around: Around): S {
  return new Proxy(stub, {
    get(target, prop) {
      // `then` stays what the stub says (nothing): a stub must not look like a promise.
      if (typeof prop === "symbol" || STUB_LOCAL.has(prop)) return Reflect.get(target, prop);
      return (...args: unknown[]) =>
        around({ binding, kind: "object", method: prop }, () =>
          Reflect.apply(Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>, target, args),
        );
    },
  });
}

/** A Durable Object namespace whose stubs report their calls (ids and stubs are made locally). */
export function interceptNamespace<N extends object>(ns: N, binding: string, around: Around): N {
  return new Proxy(ns, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop);
      if (typeof v !== "function") return v;
      if (prop === "get" || prop === "getByName") return (...args: unknown[]) => interceptStub(Reflect.apply(v, target, args) as object, binding, around);
      if (prop === "jurisdiction") return (...args: unknown[]) => interceptNamespace(Reflect.apply(v, target, args) as object, binding, around);
      return v.bind(target);
    },
  });
}

/**
 * `env` with its remote bindings intercepted; everything else is the same object's. The
 * same `env` and `around` always give the same wrapped object, so per-env caches (settings,
 * adapters) keep working.
 */
export function interceptEnv<E extends object>(env: E, around: Around, names: BindingNames = WORKER_BINDINGS): E {
  let byAround = cache.get(env);
  if (!byAround) cache.set(env, (byAround = new WeakMap()));
  const known = byAround.get(around);
  if (known) return known as E;
  const wrapped = new Map<PropertyKey, unknown>();
  for (const name of names.d1) if (name in env) wrapped.set(name, interceptD1(Reflect.get(env, name) as D1Database, name, around));
  for (const name of names.objects) if (name in env) wrapped.set(name, interceptNamespace(Reflect.get(env, name) as object, name, around));
  const proxy = new Proxy(env, { get: (target, prop) => (wrapped.has(prop) ? wrapped.get(prop) : Reflect.get(target, prop)) });
  byAround.set(around, proxy);
  return proxy;
}

const cache = new WeakMap<object, WeakMap<Around, object>>();
