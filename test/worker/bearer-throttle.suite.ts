import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE_DELAY_MS, FREE_ATTEMPTS } from "../../workers/console/throttle.ts";
import { TOKEN } from "./helpers.ts";

let nextIp = 1;
/** A client address of its own per test: the guard counts per address. */
const freshIp = () => `203.0.113.${nextIp++}`;

function v1(token: string, ip: string): Promise<Response> {
  return exports.default.fetch("https://edge.test/v1/sessions?limit=1", { headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": ip } });
}

describe("/v1 bearer guesses are throttled like console sign-ins", () => {
  it("wrong bearer guesses were not throttled: 200 guesses in a burst get 429 with Retry-After, and then the right token is refused too", async () => {
    const ip = freshIp();
    const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => v1(`guess-${i}`, ip).then(async (r) => (await r.body?.cancel(), r.status))));
    // The free attempts and the one that starts the wait are judged (401); every other guess waits.
    expect(statuses.filter((s) => s === 401)).toHaveLength(FREE_ATTEMPTS + 1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(200 - FREE_ATTEMPTS - 1);
    const held = await v1(TOKEN, ip);
    expect(held.status).toBe(429);
    expect(await held.json()).toMatchObject({ error: { code: "too_many_attempts" } });
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another client is not held up.
    expect((await v1(TOKEN, freshIp())).status).toBe(200);
  });

  it("the right token after a lockout is refused until the wait expires, then accepted and the count cleared", async () => {
    const guard = env.SIGN_IN_GUARD.get(env.SIGN_IN_GUARD.idFromName(`bearer-expiry-${freshIp()}`));
    const t0 = 1_000_000;
    for (let i = 0; i <= FREE_ATTEMPTS; i++) expect(await guard.bearer(t0 + i, false)).toEqual({ ok: false });
    const at = t0 + FREE_ATTEMPTS;
    expect(await guard.bearer(at + BASE_DELAY_MS - 1, true)).toEqual({ ok: false, retryAfterMs: 1 });
    expect(await guard.bearer(at + BASE_DELAY_MS, true)).toEqual({ ok: true });
    // Cleared: the free attempts are free again.
    for (let i = 0; i < FREE_ATTEMPTS; i++) expect(await guard.bearer(at + BASE_DELAY_MS + 1 + i, false)).toEqual({ ok: false });
    expect(await guard.bearer(at + BASE_DELAY_MS + 10, true)).toEqual({ ok: true });
  });

  it("the right token paid a guard round trip on every /v1 request: within a minute of the guard's ok it is let through at once, until a wrong token from there", async () => {
    const ip = freshIp();
    expect((await v1(TOKEN, ip)).status).toBe(200);
    // Failures counted from elsewhere (another isolate) lock the client out at the guard...
    const guard = env.SIGN_IN_GUARD.getByName(ip);
    for (let i = 0; i <= FREE_ATTEMPTS; i++) await guard.bearer(Date.now(), false);
    expect((await guard.bearer(Date.now(), true)).ok).toBe(false);
    // ...but this isolate heard the guard's ok for the right token a moment ago: not asked again.
    expect((await v1(TOKEN, ip)).status).toBe(200);
    // A wrong token seen here ends the trust: the guard judges the right one again, and holds it.
    expect((await v1("wrong", ip)).status).toBe(429);
    expect((await v1(TOKEN, ip)).status).toBe(429);
  });

  it("a request without any credentials is not counted as a guess", async () => {
    const ip = freshIp();
    for (let i = 0; i < FREE_ATTEMPTS + 3; i++) {
      const r = await exports.default.fetch("https://edge.test/v1/sessions", { headers: { "cf-connecting-ip": ip } });
      expect(r.status).toBe(401);
    }
    expect((await v1(TOKEN, ip)).status).toBe(200);
  });
});
