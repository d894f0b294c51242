import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, errorBody } from "../errors.ts";
import { logger } from "../log/index.ts";

export { ApiError, errorBody, notFound } from "../errors.ts";

/** The one place errors become HTTP responses. Unknown errors are logged without detail leaking. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) return c.json(errorBody(err.code, err.message), err.status);
  if (err instanceof HTTPException && err.status === 413) {
    return c.json(errorBody("payload_too_large", "request body is larger than 1 MiB"), 413);
  }
  if (err instanceof HTTPException) return c.json(errorBody("bad_request", err.message || "bad request"), err.status as ContentfulStatusCode);
  logger.child("http").error("unhandled error", { err });
  return c.json(errorBody("internal", "internal error"), 500);
}
