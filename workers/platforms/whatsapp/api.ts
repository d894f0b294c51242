import { withDeadline } from "../deadline.ts";
import { codeForStatus, PLATFORM_TIMEOUT_MS, PlatformApiError } from "../types.ts";
import { errorMessage } from "../../log/index.ts";

/** Where the Graph API is and who calls it. */
export interface GraphSettings {
  apiBase: string;
  accessToken: string;
  fetch: typeof fetch;
}

/** Meta's rate-limit error codes (app, account, pair and spam limits): retried later, like a 429. */
const RATE_LIMITED = new Set([4, 17, 32, 613, 80007, 130429, 131048, 131056]);
/** Sent outside the 24-hour customer service window: only a template may go. */
export const REENGAGEMENT = 131047;
/** The token expired or was revoked. */
const BAD_TOKEN = new Set([190, 102, 10, 200]);

/** The error Meta answered with: a {@link PlatformApiError} with a stable code (`rate_limited`, `unauthorized`, `outside_window`, …). */
export function graphError(status: number, body: unknown, retryAfterHeader: string | null, what: string): PlatformApiError {
  const e = (body as { error?: { message?: unknown; code?: unknown; error_subcode?: unknown } } | null)?.error;
  const code = typeof e?.code === "number" ? e.code : null;
  const message = typeof e?.message === "string" ? e.message.slice(0, 300) : `HTTP ${status}`;
  const stable =
    status === 429 || (code !== null && RATE_LIMITED.has(code))
      ? "rate_limited"
      : code === REENGAGEMENT
        ? "outside_window"
        : code !== null && BAD_TOKEN.has(code)
          ? "unauthorized"
          : codeForStatus(status);
  const after = Number(retryAfterHeader);
  // Meta rarely says how long: a minute is its usual window for these limits.
  const retryAfter = Number.isFinite(after) && after > 0 ? after : stable === "rate_limited" ? 60 : undefined;
  return new PlatformApiError("whatsapp", stable, `WhatsApp ${what}: ${message}${code !== null ? ` (code ${code})` : ""}`, {
    status,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });
}

/** One Graph API call (JSON in and out) with the access token; refusals become {@link PlatformApiError}s. */
export async function graph<T>(g: GraphSettings, method: "GET" | "POST", path: string, body?: unknown, what = `${method} ${path.split("?")[0]}`): Promise<T> {
  const url = `${g.apiBase.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
  // A timer cleared with the call (deadline.ts): the Relay object sends gateways' replies through here, and must be able to hibernate.
  const { res, parsed } = await withDeadline(PLATFORM_TIMEOUT_MS, async (signal) => {
    let res: Response;
    try {
      res = await g.fetch(url, {
        method,
        headers: { authorization: `Bearer ${g.accessToken}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        redirect: "manual",
        signal,
      });
    } catch (err) {
      throw new PlatformApiError("whatsapp", "network", `WhatsApp unreachable: ${errorMessage(err)}`);
    }
    const parsed: unknown = await res.json().catch(() => null);
    return { res, parsed };
  });
  if (!res.ok) throw graphError(res.status, parsed, res.headers.get("retry-after"), what);
  return parsed as T;
}
