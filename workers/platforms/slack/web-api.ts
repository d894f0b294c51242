/**
 * Slack's Web API over fetch: the four methods the adapter calls (chat.postMessage,
 * chat.update, conversations.open, auth.test), sent as @slack/web-api's WebClient sent them
 * with the options the adapter gave it (no retries, no queue, calls over 429 refused): a
 * form-encoded POST to `<apiUrl><method>` with the bot token as a bearer, redirects not
 * followed, within a timeout. The package is CommonJS requiring node:zlib, streams, fs and
 * os, which a cold isolate evaluated at start-up for these four calls (docs/startup.md);
 * its types are still used for the answers.
 */
import { errorMessage } from "../../log/index.ts";

/** What a Web API method answers: `ok`, `error` when it is not, and the method's fields. */
export interface SlackResult {
  ok?: boolean;
  error?: string;
  [field: string]: unknown;
}

/** How a call failed, as the WebClient's error codes told it (the adapter maps each to a PlatformApiError). */
export type SlackFailure = "rate_limited" | "platform" | "http" | "request";

/** A failed call, with the WebClient's messages (`data` holds Slack's answer when Slack said `ok: false`). */
export class SlackCallError extends Error {
  override readonly name = "SlackCallError";
  readonly kind: SlackFailure;
  readonly data: SlackResult | undefined;
  readonly statusCode: number | undefined;
  readonly retryAfter: number | undefined;

  constructor(kind: SlackFailure, message: string, opts: { data?: SlackResult; statusCode?: number; retryAfter?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.data = opts.data;
    this.statusCode = opts.statusCode;
    this.retryAfter = opts.retryAfter;
  }
}

export interface SlackClient {
  token: string;
  /** The Web API's base, ending in `/` (`https://slack.com/api/`). */
  apiUrl: string;
  fetch: typeof fetch;
  /** Limit of one call in milliseconds (none when absent). */
  timeoutMs?: number;
}

/** The base URL with its trailing slash, as the WebClient was given it. */
export function slackApiBase(apiUrl: string): string {
  return apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`;
}

/** The form body: absent values left out, anything but a string, number or boolean as JSON. */
function formBody(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    form.append(key, typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value));
  }
  return form.toString();
}

/**
 * Calls `method` with `params`; Slack's answer when it says `ok`, else a SlackCallError:
 * `request` (fetch failed or timed out), `rate_limited` (429 with a Retry-After in seconds),
 * `http` (any status but 200), `platform` (`ok: false`, or an answer that is not JSON).
 */
export async function slackCall<T = SlackResult>(client: SlackClient, method: string, params: Record<string, unknown>): Promise<T> {
  let res: Response;
  try {
    res = await client.fetch(`${client.apiUrl}${method}`, {
      method: "POST",
      headers: {
        Accept: "application/json",
        Authorization: `Bearer ${client.token}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: formBody(params),
      // workerd refuses `redirect: "error"`; "manual" has the same effect: a redirect is a non-200 answer.
      redirect: "manual",
      ...(client.timeoutMs ? { signal: AbortSignal.timeout(client.timeoutMs) } : {}),
    });
  } catch (err) {
    throw new SlackCallError("request", `A request error occurred: ${errorMessage(err)}`, { cause: err });
  }
  if (res.status === 429) {
    await res.body?.cancel();
    const header = res.headers.get("retry-after");
    const seconds = header === null ? Number.NaN : Number.parseInt(header, 10);
    // Without a usable Retry-After (a proxy's 429) it is still a rate limit, with no wait named.
    if (Number.isNaN(seconds) || seconds < 0) throw new SlackCallError("rate_limited", "A rate-limit has been reached (no valid Retry-After)");
    throw new SlackCallError("rate_limited", `A rate-limit has been reached, you may retry this request in ${seconds} seconds`, { retryAfter: seconds });
  }
  const text = await res.text();
  if (res.status !== 200) throw new SlackCallError("http", `An HTTP protocol error occurred: statusCode = ${res.status}`, { statusCode: res.status });
  let result: SlackResult;
  try {
    result = JSON.parse(text) as SlackResult;
  } catch {
    // An HTML error page or the like: its start is enough to say what it was.
    result = { ok: false, error: text.slice(0, 200) };
  }
  if (typeof result !== "object" || result === null || !result.ok) {
    const data = typeof result === "object" && result !== null ? result : { ok: false, error: String(result) };
    throw new SlackCallError("platform", `An API error occurred: ${data.error}`, { data });
  }
  return result as unknown as T;
}
