/**
 * Which failures are worth another attempt, after cloudflare/agents' `isErrorRetryable`
 * and Cloudflare's Durable Object error handling: an error may say so itself (`retryable`,
 * as the runtime's Durable Object errors, `ProviderError` and `PlatformApiError` do),
 * else its HTTP status or its message decides.
 */

/** Messages of transient failures that carry no flag: a dropped connection, an object reset by a deploy, a fetch that failed. */
const TRANSIENT = /network connection lost|durable object reset|fetch failed|econnreset|econnrefused|etimedout|eai_again|socket hang up/i;

/** 408, 429 and 5xx: the service is slow, rate limiting, or failing for now. */
function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * An overloaded Durable Object: another attempt soon only adds to its load (Cloudflare's
 * guidance is not to retry; a caller that must not drop the work waits its longest step).
 */
export function isOverloaded(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as { overloaded?: unknown; message?: unknown };
  return e.overloaded === true || (typeof e.message === "string" && e.message.includes("Durable Object is overloaded"));
}

/**
 * Is `err` worth another attempt? Not when a Durable Object is overloaded; else what the
 * error says (`retryable`), else its status (429, 5xx), else whether its message is a
 * transient network failure ("Network connection lost", a reset object, a failed fetch).
 * Anything else (a refusal, a bug) would fail the same way again.
 */
export function isRetryable(err: unknown): boolean {
  if (typeof err !== "object" || err === null || isOverloaded(err)) return false;
  const e = err as { retryable?: unknown; status?: unknown; message?: unknown };
  if (typeof e.retryable === "boolean") return e.retryable;
  if (typeof e.status === "number") return retryableStatus(e.status);
  return typeof e.message === "string" && TRANSIENT.test(e.message);
}
