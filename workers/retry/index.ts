// Retries, one way everywhere: jittered exponential backoff with a cap, the wait a service
// asked for honoured, and which failures are worth another attempt. Pure: it runs in
// workerd, Node and the browser, and every layer may import it.
export { abortableSleep, nextTask, settledWithin, backoffCeiling, backoffDelay, parseRetryAfter, retryAfterMs, type BackoffPolicy } from "./backoff.ts";
export { isOverloaded, isRetryable } from "./classify.ts";
export { retry } from "./retry.ts";
