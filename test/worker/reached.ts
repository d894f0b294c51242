/**
 * Which Inbox and session objects anything in the runtime reached: the Worker's handlers and
 * every Durable Object get their env through {@link notingEnv} (test/worker/entry.ts, the
 * helpers that call the Worker), whose namespaces note the id of each object got from them.
 * settle() waits on these, not on every object in the runtime (hundreds late in a run, and
 * listing them cost a request to Vitest's process and a conversion of every id, about 1,700
 * times a run).
 */
export const reached = {
  /** Since the last settle(): what it still has to wait on. */
  inboxes: new Set<string>(),
  agents: new Set<string>(),
  /** Session objects since the running suite began (markSuiteStart()): what until() looks at. */
  suiteAgents: new Set<string>(),
};

/** A namespace that notes the id of every object got from it. */
function noting<T extends object>(ns: T, into: Set<string>[]): T {
  return new Proxy(ns, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      const note = (id: string) => {
        for (const set of into) set.add(id);
      };
      if (key === "get")
        return (id: DurableObjectId, ...rest: unknown[]) => (note(id.toString()), (value as (...a: unknown[]) => unknown).call(target, id, ...rest));
      if (key === "getByName")
        return (name: string, ...rest: unknown[]) => (
          note((target as unknown as DurableObjectNamespace).idFromName(name).toString()), (value as (...a: unknown[]) => unknown).call(target, name, ...rest)
        );
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

const noted = new WeakMap<object, object>();

/** `env` with its Inbox and session namespaces noting what is reached through them (one object per env). */
export function notingEnv<E extends object>(env: E): E {
  let wrapped = noted.get(env) as E | undefined;
  if (wrapped === undefined) {
    const inboxes = [reached.inboxes];
    const agents = [reached.agents, reached.suiteAgents];
    wrapped = new Proxy(env, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (key === "INBOX") return noting(value as object, inboxes);
        if (key === "SESSION_AGENT") return noting(value as object, agents);
        return value;
      },
    });
    noted.set(env, wrapped);
  }
  return wrapped;
}
