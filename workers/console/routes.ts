import { Hono, type Context } from "hono";
import * as z from "zod";
import { signInGuard } from "../conversations/stubs.ts";
import { ApiError } from "../http/errors.ts";
import { jsonBody } from "../http/validate.ts";
import { safeEqual } from "../security.ts";
import { settings } from "../settings.ts";
import { consoleSignedIn, sameOrigin } from "./auth.ts";
import { issueSession, secureFor, sessionCookie, SESSION_TTL_SECONDS, tabKey } from "./cookie.ts";
import { withConsoleHeaders } from "./headers.ts";
import { clientKey } from "./throttle.ts";

const SignIn = z.lazy(() => z.object({ token: z.string().min(1).max(1000) }));

function requireOrigin(c: Context): void {
  if (!sameOrigin(c.req.raw)) throw new ApiError(403, "forbidden", "sign-in and sign-out are taken only from the console's own origin");
}

function apiToken(c: Context<{ Bindings: Env }>): string {
  const token = settings(c.env).apiToken;
  if (!token) throw new ApiError(503, "not_configured", "API_TOKEN is not set on this Worker (wrangler secret put API_TOKEN, or .dev.vars locally)");
  return token;
}

/**
 * `/console/*`: the web console's sign-in. The token is checked like a bearer token and
 * exchanged for a signed, expiring, `HttpOnly` `SameSite=Strict` cookie and a per-tab key
 * the page must send with it (see cookie.ts);
 * everything else the console does goes through `/v1`. Failed attempts are slowed per
 * client by its SignInGuard object, before the token is even compared.
 */
export const consoleRoutes = new Hono<{ Bindings: Env }>()
  .use(async (c, next) => {
    await next();
    c.res = withConsoleHeaders(c.res);
  })
  .get("/session", async (c) => {
    const token = settings(c.env).apiToken;
    return c.json({ signed_in: token ? await consoleSignedIn(c.req.raw, token, Date.now()) : false });
  })
  .post("/sign-in", async (c) => {
    requireOrigin(c);
    const expected = apiToken(c);
    const { token } = await jsonBody(c, SignIn);
    const guard = signInGuard(c.env, clientKey(c.req.header("cf-connecting-ip") ?? null));
    const now = Date.now();
    const taken = await guard.attempt(now);
    if (!taken.ok) {
      const seconds = Math.ceil(taken.retryAfterMs / 1000);
      c.header("retry-after", String(seconds));
      throw new ApiError(429, "too_many_attempts", `too many failed sign-ins from here; try again in ${seconds} s`);
    }
    if (!(await safeEqual(token, expected))) throw new ApiError(401, "unauthorized", "wrong token");
    await guard.succeeded();
    const secure = secureFor(new URL(c.req.url));
    const session = await issueSession(expected, now);
    c.header("set-cookie", sessionCookie(session, secure));
    c.header("cache-control", "no-store");
    // The per-tab key: kept by the page (sessionStorage), sent with the cookie on every /v1 request.
    return c.json({ signed_in: true, expires_at: now + SESSION_TTL_SECONDS * 1000, tab_key: await tabKey(expected, session) });
  })
  .post("/sign-out", (c) => {
    requireOrigin(c);
    c.header("set-cookie", sessionCookie(null, secureFor(new URL(c.req.url))));
    return c.json({ signed_in: false });
  });

/**
 * The console's static files (workers/console/assets, the `ASSETS` binding) for any GET
 * no route took, with the console's headers; anything else is not found.
 */
export async function consoleAssets(c: Context<{ Bindings: Env }>): Promise<Response | null> {
  const res = await c.env.ASSETS.fetch(c.req.raw);
  if (res.status === 404) return null;
  return withConsoleHeaders(res);
}
