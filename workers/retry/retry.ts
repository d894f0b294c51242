import { abortableSleep, backoffDelay, retryAfterMs, type BackoffPolicy } from "./backoff.ts";
import { isRetryable } from "./classify.ts";

/** How {@link retry} goes on after a failure. */
export interface RetryOptions {
  /** Attempts after the first (0: none). */
  retries: number;
  backoff: BackoffPolicy;
  /** Is this failure worth another attempt? Default {@link isRetryable}. */
  retryable?: (err: unknown) => boolean;
  /** A wait longer than this (a service asking for minutes) is not waited for: the error is thrown. */
  maxWaitMs?: number;
  /** Default {@link abortableSleep}; it rejects when `signal` aborts, and so does the retry. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  /** In [0, 1), like Math.random (the jitter's draw). */
  random?: () => number;
}

/**
 * Runs `fn` (given the attempt, from 0) until it resolves, a failure is not worth another
 * attempt, or the retries are spent; between attempts waits what the failure asked for
 * (`retryAfter`) or the backoff. Throws the last failure.
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  const worth = o.retryable ?? isRetryable;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= o.retries || !worth(err)) throw err;
      const wait = retryAfterMs(err) ?? backoffDelay(attempt, o.backoff, o.random);
      if (o.maxWaitMs !== undefined && wait > o.maxWaitMs) throw err;
      await (o.sleep ?? abortableSleep)(wait, o.signal);
    }
  }
}
