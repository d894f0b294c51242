/**
 * Counting the remote calls the Worker makes before it answers (issue 12). The env handed
 * to the Worker's `fetch` has its bindings (D1 and the Durable Object namespaces) wrapped
 * so that every call records when it started and ended on one logical clock, and outbound
 * `fetch` is recorded the same way (by async context, so only the Worker's own requests
 * count, not the objects'). The sequential depth is the longest chain of calls, each
 * started after the one before it ended, all over before the answer: calls that overlap
 * count once. Calls made inside the objects (their own env) are not counted: only what the
 * Worker waits for. Used by the workerd projects' round-trip tests.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { workerEnv } from "./config.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { afterAll, beforeAll } from "vitest";
import { interceptEnv, type Around, type RemoteCall } from "../../bench/entries/intercept.ts";
import worker from "../../workers/index.ts";
import { discordHeaders, slackHeaders, telegramHeaders } from "../support/signing.ts";

/** A call and when it started and ended (ticks); `end` null while it is in flight. */
export interface Timed extends RemoteCall {
  start: number;
  end: number | null;
}

/** Remote calls on one logical clock (ticks, not time: the order is what matters). */
export class Trace {
  #clock = 0;
  readonly calls: Timed[] = [];
  readonly around: Around = async (call, run) => {
    const timed: Timed = { ...call, start: this.tick(), end: null };
    this.calls.push(timed);
    try {
      return await run();
    } finally {
      timed.end = this.tick();
    }
  };

  tick(): number {
    return ++this.#clock;
  }
}

/** The longest chain of calls over by `until`, each started after the previous one ended. */
export function sequentialDepth(calls: readonly Timed[], until: number): number {
  const done = calls.filter((c) => c.end !== null && c.end < until).sort((a, b) => a.start - b.start);
  const depth = new Map<Timed, number>();
  for (const c of done) depth.set(c, 1 + Math.max(0, ...done.filter((p) => p.end! < c.start).map((p) => depth.get(p) ?? 0)));
  return Math.max(0, ...depth.values());
}

/** `INBOX.take`, `fetch https://…`, and D1 calls by what they do (`DB select`), not by the driver method that ran them. */
export function label(c: RemoteCall): string {
  if (c.kind === "fetch") return `fetch ${c.method}`;
  if (c.kind === "d1") return `${c.binding} ${c.method === "batch" ? "batch" : (/^\s*(\w+)/.exec(c.sql ?? "")?.[1] ?? c.method).toLowerCase()}`;
  return `${c.binding}.${c.method}`;
}

const current = new AsyncLocalStorage<Trace>();

/** Records the Worker's own outbound requests (while its async context carries a trace) for the file that calls this. */
export function countOutboundFetch(): void {
  const innerFetch = globalThis.fetch;
  beforeAll(() => {
    globalThis.fetch = (input, init) => {
      const trace = current.getStore();
      if (!trace) return innerFetch(input, init);
      const origin = new URL(input instanceof Request ? input.url : String(input)).origin;
      // The fakes answer within microtasks; a real request takes at least a turn of the
      // event loop, so one the Worker does not wait for cannot look finished before its answer.
      return trace.around({ binding: "fetch", kind: "fetch", method: origin }, async () => {
        await new Promise((r) => setTimeout(r, 0));
        return innerFetch(input, init);
      });
    };
  });
  afterAll(() => {
    globalThis.fetch = innerFetch;
  });
}

/** What one request waited for. */
export interface Measured {
  res: Response;
  /** Calls over before the answer (or the first token), labelled (see `label`), sorted. */
  before: string[];
  depth: number;
  calls: Timed[];
}

/**
 * Sends `request` to the Worker with counted bindings (and `vars` changed); `until` reads
 * the answer as far as it counts.
 */
export async function measure(request: Request, until?: (res: Response) => Promise<void>, vars: Partial<Record<keyof Env, string>> = {}): Promise<Measured> {
  const trace = new Trace();
  const ctx = createExecutionContext();
  const counted = interceptEnv(workerEnv(), trace.around);
  const countedEnv = new Proxy(counted, { get: (t, p) => (typeof p === "string" && p in vars ? vars[p as keyof Env] : Reflect.get(t, p)) });
  const res = await current.run(trace, async () => {
    const r = await worker.fetch(request, countedEnv, ctx);
    await until?.(r);
    return r;
  });
  const answered = trace.tick();
  await waitOnExecutionContext(ctx);
  const over = trace.calls.filter((c) => c.end !== null && c.end < answered);
  return { res, before: over.map(label).sort(), depth: sequentialDepth(trace.calls, answered), calls: trace.calls };
}

export const hook = (platform: string, body: string, headers: Record<string, string>) =>
  new Request(`http://edge.test/webhooks/${platform}`, { method: "POST", headers, body });
export const telegramHook = (update: unknown) => hook("telegram", JSON.stringify(update), telegramHeaders());
export const discordHook = async (interaction: unknown) => {
  const body = JSON.stringify(interaction);
  return hook("discord", body, await discordHeaders(body));
};
export const slackHook = async (payload: unknown) => {
  const body = JSON.stringify(payload);
  return hook("slack", body, await slackHeaders(body));
};
