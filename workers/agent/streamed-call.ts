import { isRetryable, retry, type BackoffPolicy } from "../retry/index.ts";
import { ProviderError } from "./errors.ts";
import type { ModelRequest, ModelResult } from "./model.ts";
import type { Usage } from "./types.ts";

/** Waits between attempts when the provider asked for none: 0.5 s, then 1 s, … (one user's turn waits: no jitter). */
const MODEL_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 10_000, jitter: "none" };
/** A provider asking us to wait longer than this is reported, not waited for. */
const MAX_RETRY_WAIT_MS = 10_000;

/** What an attempt fills as the reply streams: the text so far, the usage reported so far, and the result it makes. */
export interface Accumulated {
  readonly content: string;
  readonly usage: Usage | undefined;
  result(): ModelResult;
}

/** What one attempt runs with: a signal that aborts on the caller's interrupt or an idle timeout, and `arm` to call on every sign of life. */
export interface AttemptIo {
  signal: AbortSignal;
  arm: () => void;
}

/** How a model client retries and times out (its options, defaults applied). */
export interface StreamedCallOptions {
  /** Longest silence allowed before the reply starts or between two chunks. */
  idleTimeoutMs: number;
  /** Retries of a retryable failure before any text was streamed. */
  maxRetries: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** An interrupted call's result: what streamed until then, with its usage, and no tool calls (they were not complete). */
export function interrupted(acc?: Accumulated): ModelResult {
  return acc ? { ...acc.result(), toolCalls: [], finishReason: "interrupted" } : { content: "", toolCalls: [], finishReason: "interrupted" };
}

/**
 * Runs `attempt` until it returns, retrying a {@link ProviderError} that is worth it (429,
 * 5xx, unreachable; see the retry module) as long as no text was streamed and `final`
 * does not say no retry can help; waits the provider's `Retry-After` or the backoff, and
 * reports a wait over 10 s instead. An interrupt during a wait resolves as interrupted.
 */
export async function withRetries(
  req: ModelRequest,
  o: StreamedCallOptions,
  attempt: () => Promise<ModelResult>,
  final?: (err: ProviderError) => boolean,
): Promise<ModelResult> {
  try {
    return await retry(attempt, {
      retries: o.maxRetries,
      backoff: MODEL_BACKOFF,
      maxWaitMs: MAX_RETRY_WAIT_MS,
      retryable: (err) => err instanceof ProviderError && !err.partial && !final?.(err) && isRetryable(err),
      sleep: o.sleep,
      ...(req.signal ? { signal: req.signal } : {}),
    });
  } catch (err) {
    // An attempt resolves when interrupted, so what ends here while aborted is the wait.
    if (req.signal?.aborted) return interrupted();
    throw err;
  }
}

/**
 * One attempt of a streamed model call under an idle timeout. `run` sends the request and
 * reads the reply into `acc`, passing `io.signal` on and calling `io.arm()` per chunk. An
 * interrupt resolves with what `acc` holds ({@link interrupted}); silence for
 * `idleTimeoutMs` fails with `provider_timeout` (`who` sent nothing); any failure carries
 * the text streamed so far as its `partial`, and the usage reported so far (billed) as its `usage`.
 */
export async function idleAttempt(
  req: ModelRequest,
  o: { idleTimeoutMs: number; who: string },
  acc: Accumulated,
  run: (io: AttemptIo) => Promise<void>,
): Promise<ModelResult> {
  const { signal } = req;
  if (signal?.aborted) return interrupted(acc);
  const ctrl = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      ctrl.abort(new Error("idle timeout"));
    }, o.idleTimeoutMs);
  };
  const onAbort = () => ctrl.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  // A signal aborted before we listened fires no event: act on it now.
  if (signal?.aborted) onAbort();
  const timeout = () => new ProviderError("provider_timeout", `${o.who} sent nothing for ${Math.round(o.idleTimeoutMs / 1000)}s`);
  try {
    arm();
    await run({ signal: ctrl.signal, arm });
    if (signal?.aborted) return interrupted(acc);
    if (timedOut) throw timeout();
    return acc.result();
  } catch (err) {
    if (signal?.aborted) return interrupted(acc);
    const e = timedOut ? timeout() : err;
    if (e instanceof ProviderError && !e.partial) e.partial = acc.content;
    if (e instanceof ProviderError && !e.usage && acc.usage) e.usage = acc.usage;
    throw e;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
