import { ErrorCode, WebClient, type WebAPIPlatformError, type WebAPIRateLimitedError } from "@slack/web-api";
import { mapErrors, PlatformApiError, type Capabilities, type HandoffThread, type InboundMessage, type Intake, type PlatformAdapter, type ReplyTarget, type SentMessage, type Verification } from "../types.ts";
import { parseSlackBody } from "./parse.ts";
import { verifySlack } from "./verify.ts";

export { parseSlackBody, SLACK_SLASH_COMMAND } from "./parse.ts";
export { SLACK_MAX_SKEW_S, verifySlack } from "./verify.ts";

export interface SlackSettings {
  botToken: string;
  signingSecret: string;
  apiUrl: string;
  fetch?: typeof fetch;
}

export const SLACK_CAPABILITIES: Capabilities = {
  maxMessageLength: 39_000,
  lengthUnit: "codepoints",
  threads: true,
  edits: true,
  typing: false,
  editIntervalMs: { private: 1200, group: 1200 },
};

const teamCache = new Map<string, Promise<string>>();

export const HANDOFF_SEED = "🔀 A session was handed off here from the CLI; the conversation continues in this thread.";

/**
 * workerd rejects `redirect: "error"`, which @slack/web-api sets on every call; "manual"
 * keeps the same effect (a redirect is not followed; the non-200 answer is an error).
 */
export function workerdSafeFetch(inner: typeof fetch): typeof fetch {
  return (input, init) => inner(input, init?.redirect === "error" ? { ...init, redirect: "manual" } : init);
}

function toPlatformError(err: unknown): Error {
  const e = err as { code?: string; data?: { error?: string }; retryAfter?: number; message?: string };
  if (e.code === ErrorCode.RateLimitedError) {
    return new PlatformApiError("slack", "rate_limited", "Slack rate limit", { status: 429, retryAfter: (err as WebAPIRateLimitedError).retryAfter });
  }
  if (e.code === ErrorCode.PlatformError) {
    const slack = (err as WebAPIPlatformError).data.error;
    const code = slack === "invalid_auth" || slack === "not_authed" || slack === "token_revoked" ? "unauthorized" : slack === "channel_not_found" ? "not_found" : "rejected";
    return new PlatformApiError("slack", code, `Slack: ${slack}`);
  }
  if (e.code === ErrorCode.RequestError || e.code === ErrorCode.HTTPError) return new PlatformApiError("slack", "network", `Slack unreachable: ${e.message ?? ""}`);
  return err instanceof Error ? err : new Error(String(err));
}

const call = <T>(fn: () => Promise<T>) => mapErrors(fn, toPlatformError);

/** Slack over the Events API in and the Web API (@slack/web-api) out. */
export class SlackAdapter implements PlatformAdapter {
  readonly name = "slack" as const;
  readonly capabilities = SLACK_CAPABILITIES;
  readonly #s: SlackSettings;
  readonly #client: WebClient;

  constructor(settings: SlackSettings) {
    this.#s = settings;
    this.#client = new WebClient(settings.botToken, {
      slackApiUrl: settings.apiUrl.endsWith("/") ? settings.apiUrl : `${settings.apiUrl}/`,
      fetch: workerdSafeFetch(settings.fetch ?? ((input, init) => fetch(input, init))),
      // 429s come back as errors carrying retry-after; the reply streamer honours them.
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: 10_000,
    });
  }

  verify(headers: Headers, rawBody: Uint8Array, now: number): Promise<Verification> {
    return verifySlack(headers, rawBody, this.#s.signingSecret, now);
  }

  async parse(rawBody: string, headers: Headers): Promise<Intake> {
    return parseSlackBody(rawBody, headers.get("content-type") ?? "");
  }

  acknowledge(_message: InboundMessage): Response {
    return new Response(null, { status: 200 });
  }

  /** Slash commands answer with their reply in the HTTP response (seen only by the user); events cannot. */
  respondInline(message: InboundMessage, text: string): Response | null {
    if (!message.deliveryId.startsWith("slash:")) return null;
    return Response.json({ response_type: "ephemeral", text });
  }

  async send(target: ReplyTarget, text: string): Promise<SentMessage> {
    const res = await call(() => this.#client.chat.postMessage({ channel: target.chatId, text, ...(target.threadId ? { thread_ts: target.threadId } : {}) }));
    return { messageId: String(res.ts) };
  }

  async edit(target: ReplyTarget, messageId: string, text: string): Promise<void> {
    await call(() => this.#client.chat.update({ channel: target.chatId, ts: messageId, text }));
  }

  /** Slack threads hang off a message: the seed message's ts anchors the thread. */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    const res = await call(() => this.#client.chat.postMessage({ channel: parentChatId, text: `${HANDOFF_SEED}\n*${name}*` }));
    return res.ts ? { chatId: parentChatId, threadId: String(res.ts) } : null;
  }

  /** The workspace this token belongs to (auth.test), asked once per isolate. */
  async workspaceId(): Promise<string> {
    const key = `${this.#s.apiUrl}|${this.#s.botToken}`;
    let team = teamCache.get(key);
    if (!team) {
      team = call(() => this.#client.auth.test()).then((r) => String(r.team_id ?? ""));
      teamCache.set(key, team);
      team.catch(() => teamCache.delete(key));
    }
    return team;
  }

  async sourceFor(chatId: string, threadId: string | null) {
    const dm = chatId.startsWith("D");
    const workspaceId = await this.workspaceId();
    return {
      source: { platform: "slack" as const, workspaceId, chatType: dm ? ("dm" as const) : ("group" as const), chatId, threadId },
      target: { platform: "slack" as const, chatId, threadId, isPrivate: dm },
    };
  }
}
