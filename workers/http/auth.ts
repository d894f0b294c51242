import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { settings } from "../settings.ts";
import { safeEqual } from "../security.ts";
import { ApiError, errorBody } from "./errors.ts";

/** Largest request body accepted anywhere. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** `/v1/*`: bearer API_TOKEN, compared in constant time; 503 when the Worker has none (fail closed). */
export const requireApiToken: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const expected = settings(c.env).apiToken;
  if (!expected) {
    throw new ApiError(503, "not_configured", "API_TOKEN is not set on this Worker (wrangler secret put API_TOKEN, or .dev.vars locally)");
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
  if (!match || !(await safeEqual(match[1]!, expected))) {
    throw new ApiError(401, "unauthorized", "missing or wrong bearer token");
  }
  await next();
};

/** 413 for bodies over 1 MiB, counted as they stream (no trust in Content-Length). */
export const limitBody: MiddlewareHandler = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: (c) => c.json(errorBody("payload_too_large", "request body is larger than 1 MiB"), 413),
});
