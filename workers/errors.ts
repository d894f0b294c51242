import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The API's error vocabulary, shared by the route files and the application layer (the
 * webhook intake answers with the same bodies): codes, bodies and the error that carries them.
 */
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
  | "no_direct_chat"
  | "wrong_code"
  | "own_code"
  | "too_many_guesses"
  | "already_linked"
  | "platform_taken"
  | "not_allowed"
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
