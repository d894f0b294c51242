import type { Usage } from "./types.ts";

/** Stable codes for "the provider said no" versus "we could not talk to it". */
export type ProviderErrorCode =
  | "provider_auth" // 401/403: bad or missing LLM_API_KEY
  | "provider_rate_limited" // 429 after retries
  | "provider_unavailable" // 5xx after retries
  | "provider_rejected" // other 4xx: bad model name, bad request
  | "provider_bad_stream" // 2xx but the stream was not valid server-sent events
  | "provider_unreachable" // DNS, connection refused, TLS
  | "provider_timeout" // no bytes for too long
  | "provider_not_configured"; // LLM_PROVIDER names a provider this runtime cannot use

/** A model call that failed, with a message fit to show the user. */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  readonly code: ProviderErrorCode;
  readonly status: number | undefined;
  /** Seconds the provider asked us to wait (429 `retry-after`). */
  readonly retryAfter: number | undefined;
  /** Text streamed before the failure, so it can be kept. */
  partial = "";
  /** Tokens the provider reported before (or with) the failure: billed, so they are recorded. */
  usage: Usage | undefined;

  constructor(code: ProviderErrorCode, message: string, opts: { status?: number; retryAfter?: number } = {}) {
    super(message);
    this.code = code;
    this.status = opts.status;
    this.retryAfter = opts.retryAfter;
  }

  get retryable(): boolean {
    return this.code === "provider_rate_limited" || this.code === "provider_unavailable" || this.code === "provider_unreachable";
  }
}

/** Maps an HTTP status from the provider to a typed error. */
export function errorForStatus(status: number, detail: string, retryAfter?: number): ProviderError {
  const tail = detail ? `: ${detail}` : "";
  if (status === 401 || status === 403) {
    return new ProviderError("provider_auth", `the model provider rejected the API key (HTTP ${status}); check LLM_API_KEY${tail}`, { status });
  }
  if (status === 429) {
    const wait = retryAfter !== undefined ? ` (retry after ${retryAfter}s)` : "";
    return new ProviderError("provider_rate_limited", `the model provider is rate limiting us (HTTP 429)${wait}${tail}`, {
      status,
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    });
  }
  if (status >= 500) {
    return new ProviderError("provider_unavailable", `the model provider failed (HTTP ${status})${tail}`, {
      status,
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    });
  }
  return new ProviderError("provider_rejected", `the model provider rejected the request (HTTP ${status}); check LLM_MODEL and LLM_BASE_URL${tail}`, {
    status,
  });
}
