/**
 * Runs `work` with a signal that aborts after `ms`, and clears that timer as soon as the work
 * settles. Not `AbortSignal.timeout`: its timer runs to the end however soon the call is done,
 * and a pending timer keeps a Durable Object from hibernating (a Relay object that had fetched
 * one photo stayed awake for the download's minute; `evictDurableObject` waited for it).
 */
export async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError")), ms);
  try {
    return await work(ctrl.signal);
  } finally {
    clearTimeout(timer);
  }
}
