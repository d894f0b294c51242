import { errorMessage } from "../../log/index.ts";
import { codeForStatus, PLATFORM_TIMEOUT_MS, PlatformApiError } from "../types.ts";
import { fetchWithin } from "../deadline.ts";

/** Where the homeserver is and how the Worker acts there: the as_token, as the bot user. */
export interface HomeserverSettings {
  homeserverUrl: string;
  asToken: string;
  botUser: string;
  fetch: typeof fetch;
}

/** What a homeserver answers a refusal with (spec "Standard error response"). */
interface MatrixErrorBody {
  errcode?: unknown;
  error?: unknown;
  retry_after_ms?: unknown;
}

/** Seconds to wait before another attempt: `retry_after_ms` (rounded up), else `Retry-After`, else a default for a 429. */
function retryAfterOf(body: MatrixErrorBody | null, header: string | null, limited: boolean): number | undefined {
  const ms = typeof body?.retry_after_ms === "number" && Number.isFinite(body.retry_after_ms) && body.retry_after_ms >= 0 ? body.retry_after_ms : null;
  if (ms !== null) return Math.max(1, Math.ceil(ms / 1000));
  const secs = Number(header);
  if (header !== null && Number.isFinite(secs) && secs >= 0) return Math.max(1, Math.ceil(secs));
  return limited ? 5 : undefined;
}

/** The refusal as a {@link PlatformApiError}: `M_LIMIT_EXCEEDED` and 429 are `rate_limited` with the wait the homeserver asked for. */
export function matrixError(status: number, body: unknown, retryAfterHeader: string | null, what: string): PlatformApiError {
  const b = typeof body === "object" && body !== null ? (body as MatrixErrorBody) : null;
  const errcode = typeof b?.errcode === "string" ? b.errcode.slice(0, 64) : null;
  const limited = status === 429 || errcode === "M_LIMIT_EXCEEDED";
  const code = limited ? "rate_limited" : errcode === "M_UNKNOWN_TOKEN" ? "unauthorized" : codeForStatus(status);
  const message = typeof b?.error === "string" ? b.error.slice(0, 300) : `HTTP ${status}`;
  const retryAfter = retryAfterOf(b, retryAfterHeader, limited);
  return new PlatformApiError("matrix", code, `Matrix ${what}: ${message}${errcode ? ` (${errcode})` : ""}`, {
    status,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });
}

/** The homeserver's base URL without a trailing slash. */
export const baseOf = (url: string) => url.replace(/\/+$/, "");

/**
 * One client-server API call with the as_token, as the bot user (`?user_id=`, identity
 * assertion): JSON in and out, refusals as {@link PlatformApiError}. `path` starts with
 * `/_matrix/` and has its ids percent-encoded already. Never puts the token in a message.
 */
export async function homeserver<T>(
  h: HomeserverSettings,
  method: "GET" | "PUT" | "POST",
  path: string,
  body: unknown,
  what: string,
  opts: { asUser?: boolean } = {},
): Promise<T> {
  const url = new URL(`${baseOf(h.homeserverUrl)}${path}`);
  if (opts.asUser !== false) url.searchParams.set("user_id", h.botUser);
  let res: Response;
  try {
    res = await fetchWithin(h.fetch, PLATFORM_TIMEOUT_MS, url.toString(), {
      method,
      headers: { authorization: `Bearer ${h.asToken}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      redirect: "manual",
    });
  } catch (err) {
    throw new PlatformApiError("matrix", "network", `Matrix homeserver unreachable (${what}): ${errorMessage(err)}`);
  }
  const parsed: unknown = await res.json().catch(() => null);
  if (!res.ok) throw matrixError(res.status, parsed, res.headers.get("retry-after"), what);
  return parsed as T;
}

/** `/_matrix/client/v3/rooms/{roomId}/…` with the room id encoded. */
export const roomPath = (roomId: string, rest: string) => `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/${rest}`;
