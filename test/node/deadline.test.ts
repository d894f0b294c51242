import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchWithin } from "../../workers/platforms/deadline.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("fetchWithin", () => {
  it("regression: an API call's timeout timer stayed pending after the answer (AbortSignal.timeout), keeping a Durable Object awake", async () => {
    vi.useFakeTimers();
    const fake: typeof fetch = async () => Response.json({ ok: true }, { headers: { "x-a": "1" } });
    const res = await fetchWithin(fake, 15_000, "https://api.test/x");
    expect(vi.getTimerCount()).toBe(0);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-a")).toBe("1");
    expect(await res.json()).toEqual({ ok: true });
  });

  it("aborts an exchange that outlives its deadline, body included, and keeps 204's empty body", async () => {
    vi.useFakeTimers();
    const slow: typeof fetch = (_url, init) => new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    const pending = fetchWithin(slow, 1_000, "https://api.test/slow");
    const failed = expect(pending).rejects.toThrow(/timed out after 1000 ms/);
    await vi.advanceTimersByTimeAsync(1_000);
    await failed;
    const none = await fetchWithin(async () => new Response(null, { status: 204 }), 1_000, "https://api.test/none");
    expect(none.status).toBe(204);
    expect(vi.getTimerCount()).toBe(0);
  });
});
