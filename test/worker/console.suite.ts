import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { issueSession, TAB_HEADER, tabKey } from "../../workers/console/cookie.ts";
import { FREE_ATTEMPTS } from "../../workers/console/throttle.ts";
import { app } from "../../workers/app.ts";
import { call, newSession, postTurn, readEvents, TOKEN } from "./helpers.ts";
import { tgCommand } from "./platform-helpers.ts";
import { telegram } from "./setup.ts";

const ORIGIN = "https://edge.test";
let nextIp = 1;
/** A client address of its own per test: the sign-in guard counts per address. */
const freshIp = () => `198.51.100.${nextIp++}`;

function signIn(token: string, opts: { ip?: string; origin?: string | null; base?: string } = {}): Promise<Response> {
  const base = opts.base ?? ORIGIN;
  const headers: Record<string, string> = { "content-type": "application/json", "cf-connecting-ip": opts.ip ?? freshIp() };
  if (opts.origin !== null) headers.origin = opts.origin ?? base;
  return exports.default.fetch(`${base}/console/sign-in`, { method: "POST", headers, body: JSON.stringify({ token }) });
}

/** The `name=value` of a response's Set-Cookie, as a browser would send it back. */
function cookieOf(res: Response): string {
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

/** A signed-in tab: the cookie and the per-tab key its sign-in returned. */
async function tabOf(res: Response): Promise<{ cookie: string; tab: string }> {
  const body = (await res.json()) as { tab_key: string };
  return { cookie: cookieOf(res), tab: body.tab_key };
}

function withCookie(path: string, cookie: string | { cookie: string; tab: string }, init: RequestInit & { origin?: string } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (typeof cookie === "string") headers.set("cookie", cookie);
  else {
    headers.set("cookie", cookie.cookie);
    headers.set(TAB_HEADER, cookie.tab);
  }
  if (init.origin) headers.set("origin", init.origin);
  return exports.default.fetch(`${ORIGIN}${path}`, { ...init, headers });
}

describe("the console's files", () => {
  it("serves the page at / and its script, each with the strict CSP; other paths stay JSON 404s", async () => {
    const page = await exports.default.fetch(`${ORIGIN}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const csp = page.headers.get("content-security-policy")!;
    for (const part of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ])
      expect(csp).toContain(part);
    expect(csp).not.toContain("unsafe");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/app.js"></script>');
    // No inline script or style for the CSP to refuse.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|\son\w+=/);
    const script = await exports.default.fetch(`${ORIGIN}/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-security-policy")).toBe(csp);
    await script.body?.cancel();
    const missing = await exports.default.fetch(`${ORIGIN}/no-such-file`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "not_found" } });
    expect((await exports.default.fetch(`${ORIGIN}/health`)).status).toBe(200);
  });
});

describe("console sign-in", () => {
  it("exchanges the right token for an HttpOnly, SameSite=Strict, Secure __Host- cookie that is not the token", async () => {
    const res = await signIn(TOKEN);
    expect(res.status).toBe(200);
    const set = res.headers.get("set-cookie")!;
    const tab = await tabOf(res);
    expect(tab.tab).toMatch(/^[0-9a-f]{64}$/);
    expect(set).toMatch(/^__Host-hermes_console=\d+\.[\w-]{22}\.[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200$/);
    expect(set).not.toContain(TOKEN);
    const status = await withCookie("/console/session", tab);
    expect(await status.json()).toEqual({ signed_in: true });
  });

  it("on loopback over http the cookie goes without Secure (and so without the __Host- prefix)", async () => {
    const res = await signIn(TOKEN, { base: "http://127.0.0.1:8787" });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/^hermes_console=\S+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
  });

  it("refuses a wrong token (401), and a sign-in or sign-out from another origin or none (403)", async () => {
    const wrong = await signIn(`${TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    for (const origin of ["https://evil.test", null]) {
      const res = await signIn(TOKEN, { origin });
      expect(res.status, String(origin)).toBe(403);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    const out = await exports.default.fetch(`${ORIGIN}/console/sign-out`, { method: "POST", headers: { origin: "https://evil.test" } });
    expect(out.status).toBe(403);
  });

  it("slows failed sign-ins per client: after the free attempts even the right token waits (429, Retry-After); other clients are not held up", async () => {
    const ip = freshIp();
    for (let i = 0; i < FREE_ATTEMPTS; i++) expect((await signIn("guess", { ip })).status).toBe(401);
    // The next attempt is taken (the wait starts after it) and fails; then the client must wait.
    expect((await signIn("guess", { ip })).status).toBe(401);
    const held = await signIn(TOKEN, { ip });
    expect(held.status).toBe(429);
    expect(await held.json()).toMatchObject({ error: { code: "too_many_attempts" } });
    expect(Number(held.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await signIn(TOKEN, { ip: freshIp() })).status).toBe(200);
  });

  it("counts an IPv6 client by its /64, and a success clears the count", async () => {
    for (let i = 0; i <= FREE_ATTEMPTS; i++) expect((await signIn("guess", { ip: `2001:db8:7:1::${i + 1}` })).status).toBe(401);
    expect((await signIn(TOKEN, { ip: "2001:0db8:0007:0001:ffff::2" })).status).toBe(429);
    const ip = freshIp();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < FREE_ATTEMPTS - 1; i++) expect((await signIn("guess", { ip })).status).toBe(401);
      expect((await signIn(TOKEN, { ip })).status).toBe(200);
    }
  });

  it("signs out by clearing the cookie", async () => {
    const res = await exports.default.fetch(`${ORIGIN}/console/sign-out`, { method: "POST", headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/^__Host-hermes_console=; Path=\/; HttpOnly; SameSite=Strict; Secure; Max-Age=0$/);
  });
});

describe("/v1 with the console cookie", () => {
  it("reads with the cookie; changes need the console's own Origin (403 without, or from elsewhere)", async () => {
    const cookie = await tabOf(await signIn(TOKEN));
    expect((await withCookie("/v1/sessions?limit=1", cookie)).status).toBe(200);
    const create = (origin?: string) =>
      withCookie("/v1/sessions", cookie, { method: "POST", body: JSON.stringify({ title: "from the console" }), ...(origin ? { origin } : {}) });
    for (const origin of [undefined, "https://evil.test", "http://edge.test"]) {
      const res = await create(origin);
      expect(res.status, String(origin)).toBe(403);
      expect(await res.json()).toMatchObject({ error: { code: "forbidden" } });
    }
    expect((await create(ORIGIN)).status).toBe(201);
  });

  it("refuses a cookie that was tampered with, expired, or signed under a previous API_TOKEN", async () => {
    const good = (await issueSession(TOKEN, Date.now())).split(".");
    const tampered = [good[0], good[1], good[2]!.replace(/^./, (c) => (c === "0" ? "1" : "0"))].join(".");
    const expired = await issueSession(TOKEN, Date.now() - 13 * 60 * 60 * 1000);
    const rotated = await issueSession("the-old-token", Date.now());
    for (const value of [tampered, expired, rotated, TOKEN]) {
      const res = await withCookie("/v1/sessions", { cookie: `__Host-hermes_console=${value}`, tab: await tabKey(TOKEN, value) });
      expect(res.status, value).toBe(401);
    }
  });

  it("judges a request with a bearer header by it alone, and keeps /v1 closed without API_TOKEN", async () => {
    const cookie = cookieOf(await signIn(TOKEN));
    const res = await exports.default.fetch(`${ORIGIN}/v1/sessions`, { headers: { cookie, authorization: "Bearer wrong" } });
    expect(res.status).toBe(401);
    expect((await call("/v1/sessions?limit=1")).status).toBe(200);
    const closed = await exports.default.fetch(`${ORIGIN}/console/sign-in`, { method: "POST", headers: { origin: ORIGIN } });
    expect(closed.status).toBe(400);
    expect(env.API_TOKEN).toBe(TOKEN);
  });
});

describe("the console's per-tab key", () => {
  it("the console cookie alone was replayable from another local port: /v1 refuses a cookie without this tab's key (401), or with another session's", async () => {
    const base = "http://127.0.0.1:8787";
    const res = await signIn(TOKEN, { base });
    const { cookie, tab } = await tabOf(res);
    const get = (headers: Record<string, string>) => exports.default.fetch(`${base}/v1/sessions?limit=1`, { headers: { cookie, ...headers } });
    expect((await get({ [TAB_HEADER]: tab })).status).toBe(200);
    const bare = await get({});
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ error: { code: "unauthorized", message: expect.stringContaining("sign in again in this tab") } });
    const other = await tabOf(await signIn(TOKEN, { base }));
    expect((await get({ [TAB_HEADER]: other.tab })).status).toBe(401);
    expect((await get({ [TAB_HEADER]: tab.replace(/^./, (c) => (c === "0" ? "1" : "0")) })).status).toBe(401);
    // A new tab (no key) is shown the sign-in form: /console/session says signed out.
    expect(await (await exports.default.fetch(`${base}/console/session`, { headers: { cookie } })).json()).toEqual({ signed_in: false });
    expect(await (await exports.default.fetch(`${base}/console/session`, { headers: { cookie, [TAB_HEADER]: tab } })).json()).toEqual({ signed_in: true });
  });
});

describe("routes the console reads", () => {
  it("GET /v1/sessions?q= finds sessions by part of the title or id, case-insensitively", async () => {
    const a = await newSession("Quarterly PLANNING with 100% focus_");
    const b = await newSession("something else");
    const find = async (q: string) =>
      ((await (await call(`/v1/sessions?limit=200&q=${encodeURIComponent(q)}`)).json()) as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id);
    expect(await find("planning")).toContain(a);
    expect(await find("planning")).not.toContain(b);
    // No wildcards: % and _ are themselves.
    expect(await find("100% focus_")).toEqual([a]);
    expect(await find("%")).toEqual([a]);
    expect(await find(b.slice(-6))).toEqual([b]);
  });

  it("GET /v1/platforms says what each platform lacks and the setup command for this Worker", async () => {
    const { platforms, worker } = (await (await call("/v1/platforms")).json()) as {
      platforms: Array<{ name: string; missing: string[]; setup: string }>;
      worker: unknown;
    };
    expect(platforms.find((p) => p.name === "telegram")).toMatchObject({ missing: [], setup: "npx hermes-edge setup telegram --url http://edge.test" });
    expect(worker).toEqual({ origin: "http://edge.test", local: false });
    const bare = await exports.default.fetch(new Request("http://edge.test/v1/platforms", { headers: { authorization: `Bearer ${TOKEN}` } }));
    expect(bare.status).toBe(200);
  });

  it("regression: the Platforms page told a local Worker to `wrangler secret put` a var: GET /v1/platforms says where the Worker runs, how each missing setting is declared, and whether *_ALLOWED_USERS is set", async () => {
    const unset = { ...env, DISCORD_PUBLIC_KEY: "", DISCORD_BOT_TOKEN: "", DISCORD_ALLOWED_USERS: "" };
    type Answer = { platforms: Array<{ name: string; missing_settings: unknown; allowed_users: unknown }>; worker: { local: boolean; origin: string } };
    const ask = async (base: string) =>
      (await (await app.fetch(new Request(`${base}/v1/platforms`, { headers: { authorization: `Bearer ${TOKEN}` } }), unset)).json()) as Answer;
    const local = await ask("http://127.0.0.1:8787");
    expect(local.worker).toEqual({ origin: "http://127.0.0.1:8787", local: true });
    expect(local.platforms.find((p) => p.name === "discord")).toMatchObject({
      missing_settings: [
        { name: "DISCORD_BOT_TOKEN", kind: "secret" },
        { name: "DISCORD_PUBLIC_KEY", kind: "var" },
      ],
      allowed_users: { setting: "DISCORD_ALLOWED_USERS", set: false },
    });
    expect(local.platforms.find((p) => p.name === "telegram")).toMatchObject({
      missing_settings: [],
      allowed_users: { setting: "TELEGRAM_ALLOWED_USERS", set: true },
    });
    expect((await ask("http://localhost:8787")).worker.local).toBe(true);
    expect((await ask("https://edge.example.workers.dev")).worker.local).toBe(false);
  });

  it("regression: the usage tab listed session ids without titles: GET /v1/usage?group=session carries each session's title", async () => {
    const id = await newSession("usage with a title");
    await readEvents(await postTurn(id, "hello"));
    const untitled = await newSession();
    await readEvents(await postTurn(untitled, "hi"));
    const { usage } = (await (await call("/v1/usage?group=session")).json()) as { usage: Array<{ key: string; title?: string | null }> };
    expect(usage.find((u) => u.key === id)?.title).toBe("usage with a title");
    expect(usage.find((u) => u.key === untitled)).toHaveProperty("title");
    const { usage: days } = (await (await call("/v1/usage?group=day")).json()) as { usage: Array<Record<string, unknown>> };
    expect(days[0]).not.toHaveProperty("title");
  });
});

describe("regression: sessions made in the console said source: cli", () => {
  it("a session made in the console has source console; one made with the bearer token (the CLI) has source cli", async () => {
    const tab = await tabOf(await signIn(TOKEN));
    const made = await withCookie("/v1/sessions", tab, { method: "POST", body: JSON.stringify({ title: "typed in the console" }), origin: ORIGIN });
    expect(made.status).toBe(201);
    const { session } = (await made.json()) as { session: { id: string; source: string } };
    expect(session.source).toBe("console");
    expect(((await (await call(`/v1/sessions/${session.id}`)).json()) as { session: { source: string } }).session.source).toBe("console");
    const listed = (await (await call("/v1/sessions?source=console&limit=200")).json()) as { sessions: Array<{ id: string }> };
    expect(listed.sessions.map((s) => s.id)).toContain(session.id);
    const cli = await newSession("typed in the CLI");
    expect(((await (await call(`/v1/sessions/${cli}`)).json()) as { session: { source: string } }).session.source).toBe("cli");
  });

  it("console sessions are the operator's, like CLI ones: *_ADMIN_USERS may /resume them, other users may not", async () => {
    const tab = await tabOf(await signIn(TOKEN));
    const made = await withCookie("/v1/sessions", tab, { method: "POST", body: JSON.stringify({ title: "console notes" }), origin: ORIGIN });
    const { id } = ((await made.json()) as { session: { id: string } }).session;
    await tgCommand("resume", id, 1002);
    expect(telegram.texts(1002).at(-1)).toContain("No session matches");
    await tgCommand("resume", "", 1007);
    expect(telegram.texts(1007).at(-1)).toContain(id);
  });
});
