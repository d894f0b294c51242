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

/**
 * `fetch` with a deadline over the whole exchange (the request and reading the body), whose
 * timer is cleared when the exchange ends. The body is read into memory: for API calls with
 * small JSON answers, not downloads (those stream through `files.ts`).
 */
export function fetchWithin(fetchImpl: typeof fetch, ms: number, url: string, init: RequestInit = {}): Promise<Response> {
  return withDeadline(ms, async (deadline) => {
    const res = await fetchImpl(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
    if (res.status < 200) return res;
    const body = [204, 205, 304].includes(res.status) ? null : await res.arrayBuffer();
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  });
}
