import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { consoleSignedIn, sameOrigin } from "../console/auth.ts";
import type { OperatorSource } from "../platforms/names.ts";
import { clientKey, RecentlyCleared } from "../console/throttle.ts";
import { signInGuard } from "../conversations/stubs.ts";
import { settings } from "../settings.ts";
import { safeEqual } from "../security.ts";
import { ApiError, errorBody } from "./errors.ts";

/**
 * Who made a `/v1` request that `requireApiToken` let through: a request without an
 * Authorization header can only have been admitted by the console's cookie.
 */
export function callerOf(req: Request): OperatorSource {
  return req.headers.get("authorization") === null ? "console" : "cli";
}

/** Largest request body accepted anywhere. */
export const MAX_BODY_BYTES = 1024 * 1024;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** This isolate's clients whose right token the guard accepted lately. */
const recentlyCleared = new RecentlyCleared();

/**
 * `/v1/*`: the bearer API_TOKEN, compared in constant time, or the web console's signed
 * session cookie with its per-tab key header (workers/console). A request that carries a bearer header is judged by it
 * alone. A cookie travels with any request the browser makes, so one that changes
 * something must also come from the console's own origin (403 otherwise). Bearer checks
 * are counted per client by its SignInGuard, exactly like console sign-ins (429 with
 * Retry-After while it must wait, whatever the token). 503 when the
 * Worker has no API_TOKEN (fail closed). The right token from a client the guard cleared in
 * the last minute, here, is let through without asking it again ({@link RecentlyCleared}).
 */
export const requireApiToken: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const expected = settings(c.env).apiToken;
  if (!expected) {
    throw new ApiError(503, "not_configured", "API_TOKEN is not set on this Worker (wrangler secret put API_TOKEN, or .dev.vars locally)");
  }
  const header = c.req.header("authorization");
  if (header !== undefined) {
    const token = /^Bearer[ ]+(\S+)\s*$/i.exec(header)?.[1];
    const right = token !== undefined && (await safeEqual(token, expected));
    const client = clientKey(c.req.header("cf-connecting-ip") ?? null);
    const now = Date.now();
    if (right && recentlyCleared.trusted(client, now)) return next();
    if (!right) recentlyCleared.failed(client);
    // Counted per client like console sign-ins: a locked-out client is refused even the right token.
    const judged = await signInGuard(c.env, client).bearer(now, right);
    if (right && judged.ok) recentlyCleared.cleared(client, now);
    if (judged.retryAfterMs !== undefined) {
      const seconds = Math.max(1, Math.ceil(judged.retryAfterMs / 1000));
      c.header("retry-after", String(seconds));
      throw new ApiError(429, "too_many_attempts", `too many wrong bearer tokens from here; try again in ${seconds} s`);
    }
    if (!judged.ok) throw new ApiError(401, "unauthorized", "missing or wrong bearer token");
    return next();
  }
  if (!(await consoleSignedIn(c.req.raw, expected, Date.now())))
    throw new ApiError(401, "unauthorized", "missing or wrong bearer token (a console request needs its cookie and this tab's key: sign in again in this tab)");
  if (!SAFE_METHODS.has(c.req.method) && !sameOrigin(c.req.raw)) {
    throw new ApiError(403, "forbidden", "a console request that changes something must come from the console's own origin");
  }
  await next();
};

/**
 * The cap on a request below a webhook URL (`/webhooks/<platform>/…`): a Matrix homeserver
 * batches up to 100 events of up to 64 KiB in one transaction, and a transaction refused
 * would be sent again forever, holding back every later one.
 */
export const MAX_TRANSACTION_BYTES = 8 * 1024 * 1024;

/** 413 for a transaction over {@link MAX_TRANSACTION_BYTES}, counted as it streams. */
export const limitTransactionBody: MiddlewareHandler = bodyLimit({
  maxSize: MAX_TRANSACTION_BYTES,
  onError: (c) => c.json(errorBody("payload_too_large", "request body is larger than 8 MiB"), 413),
});

/** 413 for bodies over 1 MiB, counted as they stream (no trust in Content-Length). */
export const limitBody: MiddlewareHandler = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) => c.json(errorBody("payload_too_large", "request body is larger than 1 MiB"), 413),
});
