import { afterEach, describe, expect, it, vi } from "vitest";
import { ProviderError, errorForStatus } from "../../workers/agent/errors.ts";
import { PlatformApiError } from "../../workers/platforms/types.ts";
import { backoffCeiling, backoffDelay, isOverloaded, isRetryable, parseRetryAfter, retry, retryAfterMs, settledWithin } from "../../workers/retry/index.ts";
import type { BackoffPolicy } from "../../workers/retry/index.ts";

const ONE_TO_THIRTY: BackoffPolicy = { baseMs: 1000, capMs: 30_000, jitter: "equal" };
const low = () => 0;
const high = () => 0.999999;

/** A Durable Object error as the runtime throws it: an Error with flags. */
const objectError = (message: string, flags: { retryable?: boolean; overloaded?: boolean } = {}) => Object.assign(new Error(message), flags);

describe("backoff", () => {
  it("doubles from the base per failure and stops at the cap, staying finite however many failures", () => {
    expect(Array.from({ length: 7 }, (_, n) => backoffCeiling(n, ONE_TO_THIRTY))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(backoffCeiling(10_000, ONE_TO_THIRTY)).toBe(30_000);
    expect(backoffCeiling(-3, ONE_TO_THIRTY)).toBe(1000);
  });

  it("draws equal jitter from [ceiling/2, ceiling], full jitter from [0, ceiling), and none is the ceiling", () => {
    for (let n = 0; n < 8; n++) {
      const ceiling = backoffCeiling(n, ONE_TO_THIRTY);
      expect(backoffDelay(n, ONE_TO_THIRTY, low)).toBe(ceiling / 2);
      expect(backoffDelay(n, ONE_TO_THIRTY, high)).toBe(ceiling);
      expect(backoffDelay(n, { ...ONE_TO_THIRTY, jitter: "full" }, low)).toBe(0);
      expect(backoffDelay(n, { ...ONE_TO_THIRTY, jitter: "full" }, high)).toBe(ceiling - 1);
      expect(backoffDelay(n, { ...ONE_TO_THIRTY, jitter: "none" }, () => 0.5)).toBe(ceiling);
    }
    expect(backoffDelay(2, ONE_TO_THIRTY, () => 0.5)).toBe(3000);
  });
});

describe("Retry-After", () => {
  const now = Date.parse("2026-12-03T12:00:00Z");

  it("reads seconds or an HTTP date, never negative, and ignores what it cannot read", () => {
    expect(parseRetryAfter("2", now)).toBe(2);
    expect(parseRetryAfter(" 1.5 ", now)).toBe(1.5);
    expect(parseRetryAfter("-4", now)).toBe(0);
    expect(parseRetryAfter("Thu, 03 Dec 2026 12:00:30 GMT", now)).toBe(30);
    expect(parseRetryAfter("Thu, 03 Dec 2026 11:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("turns an error's retryAfter (a platform's retry_after, a provider's header) into ms", () => {
    expect(retryAfterMs(new PlatformApiError("telegram", "rate_limited", "Too Many Requests", { status: 429, retryAfter: 7 }))).toBe(7000);
    expect(retryAfterMs(errorForStatus(429, "", 2))).toBe(2000);
    expect(retryAfterMs(errorForStatus(503, ""))).toBeUndefined();
    expect(retryAfterMs(new Error("x"))).toBeUndefined();
    expect(retryAfterMs("429")).toBeUndefined();
  });
});

describe("which failures are worth a retry", () => {
  it("platform refusals: 429, 5xx and the network are; 401, 403, 404 and bad requests are not", () => {
    for (const code of ["rate_limited", "unavailable", "network"]) expect(isRetryable(new PlatformApiError("slack", code, code))).toBe(true);
    for (const code of ["unauthorized", "not_found", "rejected"]) expect(isRetryable(new PlatformApiError("slack", code, code))).toBe(false);
  });

  it("model providers: rate limits, 5xx and unreachable are; a bad key, a rejected request, a broken stream are not", () => {
    expect(isRetryable(errorForStatus(429, ""))).toBe(true);
    expect(isRetryable(errorForStatus(502, ""))).toBe(true);
    expect(isRetryable(new ProviderError("provider_unreachable", "refused"))).toBe(true);
    expect(isRetryable(errorForStatus(401, ""))).toBe(false);
    expect(isRetryable(errorForStatus(400, ""))).toBe(false);
    expect(isRetryable(new ProviderError("provider_bad_stream", "cut"))).toBe(false);
  });

  it("Durable Objects: a retryable flag, a lost connection or a reset are; an overloaded object never is, whatever its flags", () => {
    expect(isRetryable(objectError("Internal error", { retryable: true }))).toBe(true);
    expect(isRetryable(objectError("Network connection lost."))).toBe(true);
    expect(isRetryable(objectError("Durable Object reset because its code was updated."))).toBe(true);
    expect(isRetryable(objectError("Durable Object is overloaded. Too many requests queued.", { retryable: true }))).toBe(false);
    expect(isRetryable(objectError("Too many requests", { retryable: true, overloaded: true }))).toBe(false);
    expect(isOverloaded(objectError("Durable Object is overloaded. Requests queued for too long."))).toBe(true);
    expect(isOverloaded(objectError("Network connection lost."))).toBe(false);
    expect(isRetryable(objectError("user code threw", { retryable: false }))).toBe(false);
  });

  it("anything else by its status or as a failed fetch; bugs and non-errors are not", () => {
    expect(isRetryable(Object.assign(new Error("busy"), { status: 503 }))).toBe(true);
    expect(isRetryable(Object.assign(new Error("slow"), { status: 408 }))).toBe(true);
    expect(isRetryable(Object.assign(new Error("bad"), { status: 422 }))).toBe(false);
    expect(isRetryable(new TypeError("fetch failed"))).toBe(true);
    expect(isRetryable(new TypeError("x is not a function"))).toBe(false);
    expect(isRetryable("Network connection lost")).toBe(false);
    expect(isRetryable(null)).toBe(false);
  });
});

describe("the retry loop", () => {
  /** A function that fails with `errors` in turn, then returns "ok"; and the waits the loop slept. */
  function rig(errors: unknown[]) {
    const attempts: number[] = [];
    const sleeps: number[] = [];
    const fn = async (attempt: number) => {
      attempts.push(attempt);
      const err = errors.shift();
      if (err !== undefined) throw err;
      return "ok";
    };
    const sleep = async (ms: number) => void sleeps.push(ms);
    return { fn, sleep, attempts, sleeps };
  }

  it("retries a transient failure with jittered backoff, honouring a Retry-After over it", async () => {
    const r = rig([errorForStatus(503, ""), errorForStatus(429, "", 3), objectError("Network connection lost.")]);
    expect(await retry(r.fn, { retries: 3, backoff: ONE_TO_THIRTY, sleep: r.sleep, random: low })).toBe("ok");
    expect(r.attempts).toEqual([0, 1, 2, 3]);
    expect(r.sleeps).toEqual([500, 3000, 2000]);
  });

  it("throws at once what is not worth a retry, and the last failure when the retries are spent", async () => {
    const refused = rig([errorForStatus(401, "")]);
    await expect(retry(refused.fn, { retries: 5, backoff: ONE_TO_THIRTY, sleep: refused.sleep })).rejects.toMatchObject({ code: "provider_auth" });
    expect(refused.attempts).toEqual([0]);

    const down = rig([errorForStatus(500, "a"), errorForStatus(502, "b"), errorForStatus(503, "c")]);
    await expect(retry(down.fn, { retries: 2, backoff: ONE_TO_THIRTY, sleep: down.sleep, random: high })).rejects.toMatchObject({ status: 503 });
    expect(down.sleeps).toEqual([1000, 2000]);
  });

  it("reports a wait longer than maxWaitMs instead of waiting, and asks its own predicate when given one", async () => {
    const long = rig([errorForStatus(429, "", 120)]);
    await expect(retry(long.fn, { retries: 2, backoff: ONE_TO_THIRTY, maxWaitMs: 10_000, sleep: long.sleep })).rejects.toMatchObject({ retryAfter: 120 });
    expect(long.sleeps).toEqual([]);

    const odd = rig([new Error("try me again")]);
    expect(await retry(odd.fn, { retries: 1, backoff: { ...ONE_TO_THIRTY, jitter: "none" }, retryable: () => true, sleep: odd.sleep })).toBe("ok");
    expect(odd.sleeps).toEqual([1000]);
  });

  it("stops when its signal aborts during a wait", async () => {
    const ctrl = new AbortController();
    const r = rig([errorForStatus(503, "")]);
    const p = retry(r.fn, { retries: 3, backoff: { baseMs: 60_000, capMs: 60_000, jitter: "none" }, signal: ctrl.signal });
    await Promise.resolve();
    ctrl.abort(new Error("stopped"));
    await expect(p).rejects.toThrow("stopped");
    expect(r.attempts).toEqual([0]);
  });
});

describe("settledWithin: a wait for something, at most so long", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const watched = (p: Promise<void>) => {
    let done = false;
    void p.then(() => (done = true));
    return () => done;
  };

  it("resolves when the promise settles, resolved or rejected, and leaves no timer behind", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const resolved = Promise.withResolvers<void>();
    const a = watched(settledWithin(resolved.promise, 1000));
    await vi.advanceTimersByTimeAsync(10);
    expect(a()).toBe(false);
    resolved.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(a()).toBe(true);
    const b = watched(settledWithin(Promise.reject(new Error("gone")), 1000));
    await vi.advanceTimersByTimeAsync(0);
    expect(b()).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("resolves after the time when the promise never settles", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const c = watched(settledWithin(new Promise<void>(() => undefined), 1000));
    await vi.advanceTimersByTimeAsync(999);
    expect(c()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(c()).toBe(true);
  });
});
