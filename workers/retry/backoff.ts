/**
 * How long to wait before attempt `n + 1`: a ceiling that starts at `baseMs`, doubles per
 * failed attempt and stops at `capMs`, drawn within it by the jitter.
 */
export interface BackoffPolicy {
  /** The ceiling after the first failure (`attempt` 0). */
  baseMs: number;
  /** No wait is longer. */
  capMs: number;
  /**
   * `equal`: drawn from [ceiling / 2, ceiling], so callers that failed together spread out
   * yet none retries at once in a tight loop. `full`: from [0, ceiling) (AWS's "full
   * jitter", cloudflare/agents' `jitterBackoff`). `none`: exactly the ceiling, for a wait
   * that is a rule rather than a retry (the console's sign-in throttle tells the client).
   */
  jitter: "none" | "equal" | "full";
}

/** The ceiling of the wait after `attempt` failures counted from 0 (never above the cap). */
export function backoffCeiling(attempt: number, p: Pick<BackoffPolicy, "baseMs" | "capMs">): number {
  // Past 2^30 every realistic cap has long been reached; the clamp keeps the product finite.
  return Math.min(p.capMs, p.baseMs * 2 ** Math.min(Math.max(0, Math.floor(attempt)), 30));
}

/** The wait after `attempt` failures counted from 0, in ms; `random` is in [0, 1), like Math.random. */
export function backoffDelay(attempt: number, p: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = backoffCeiling(attempt, p);
  if (p.jitter === "none") return ceiling;
  if (p.jitter === "full") return Math.floor(random() * ceiling);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * An HTTP `Retry-After` value in seconds: a number of seconds, or an HTTP date (counted
 * from `now`, epoch ms). Undefined when absent or not understood; never negative.
 */
export function parseRetryAfter(header: string | null | undefined, now: number): number | undefined {
  const h = header?.trim();
  if (!h) return undefined;
  const n = Number(h);
  if (Number.isFinite(n)) return Math.max(0, n);
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - now) / 1000)) : undefined;
}

/**
 * The wait an error says its service asked for, in ms: its `retryAfter` in seconds (a
 * platform's 429 `retry_after`, a provider's `Retry-After`). Undefined when it asked none.
 */
export function retryAfterMs(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const s = (err as { retryAfter?: unknown }).retryAfter;
  return typeof s === "number" && Number.isFinite(s) ? Math.max(0, s * 1000) : undefined;
}

/**
 * Resolves in the runtime's next task, after what is waiting for I/O has had its turn: a
 * stream's chunk written just before goes out instead of waiting behind the work that
 * follows in the same task (a whole reply that came in one read, say).
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Resolves once `promise` settles or `ms` have passed, whichever is first (never rejects); the timer is cleared. */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const quiet = promise.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([quiet, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
