import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Stable error codes of the HTTP API (SPEC section 1). */
export type ErrorCode =
  | "bad_request"
  | "invalid_json"
  | "unauthorized"
  | "forbidden"
  | "too_many_attempts"
  | "not_found"
  | "turn_in_progress"
  | "handoff_in_flight"
  | "payload_too_large"
  | "platform_not_configured"
  | "no_home_channel"
  | "unknown_platform"
  | "not_configured"
  | "internal";

/** The JSON body of every error response. */
export function errorBody(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** An error with an HTTP status and a stable code; `app.onError` turns it into JSON. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: ContentfulStatusCode;
  readonly code: ErrorCode;

  constructor(status: ContentfulStatusCode, code: ErrorCode, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found`);

/** The one place errors become HTTP responses. Unknown errors are logged without detail leaking. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) return c.json(errorBody(err.code, err.message), err.status);
  if (err instanceof HTTPException && err.status === 413) {
    return c.json(errorBody("payload_too_large", "request body is larger than 1 MiB"), 413);
  }
  if (err instanceof HTTPException) return c.json(errorBody("bad_request", err.message || "bad request"), err.status as ContentfulStatusCode);
  console.error("unhandled error", err.name, err.message);
  return c.json(errorBody("internal", "internal error"), 500);
}
