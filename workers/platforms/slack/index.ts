import { ErrorCode, WebClient, type WebAPIPlatformError, type WebAPIRateLimitedError } from "@slack/web-api";
import { renderParts, showMarkdown, type Part, type RenderSpec } from "../parts.ts";
import {
  mapErrors,
  PLATFORM_TIMEOUT_MS,
  PlatformApiError,
  type Attachment,
  type Capabilities,
  type CommandStyle,
  type HandoffThread,
  type Ingest,
  type PlatformAdapter,
  type PlatformHealth,
  type PlatformEvent,
  type ReplyTarget,
  type Shown,
  type Verification,
} from "../types.ts";
import { parseSlackBody } from "./parse.ts";
import { slackTarget, slackTargets } from "./target.ts";
import type { Download } from "../../attachments/index.ts";
import { downloadSlackFile } from "./files.ts";
import { verifySlack } from "./verify.ts";
import { slackHealth } from "./health.ts";
import { errorMessage } from "../../log/index.ts";

export { parseSlackBody } from "./parse.ts";
export { slackTarget } from "./target.ts";

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

/** Replies are sent as mrkdwn in `text` (Slack's default for chat.postMessage and chat.update). */
export const SLACK_RENDER: RenderSpec = { dialect: "slack", limit: SLACK_CAPABILITIES.maxMessageLength, unit: SLACK_CAPABILITIES.lengthUnit };

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
  const e = err as { code?: string; data?: { error?: string }; retryAfter?: number; message?: string; statusCode?: number };
  if (e.code === ErrorCode.RateLimitedError) {
    return new PlatformApiError("slack", "rate_limited", "Slack rate limit", { status: 429, retryAfter: (err as WebAPIRateLimitedError).retryAfter });
  }
  if (e.code === ErrorCode.PlatformError) {
    const slack = (err as WebAPIPlatformError).data.error;
    const code =
      slack === "invalid_auth" || slack === "not_authed" || slack === "token_revoked" || slack === "account_inactive"
        ? "unauthorized"
        : slack === "channel_not_found" || slack === "message_not_found"
          ? "not_found"
          : slack === "fatal_error" || slack === "service_unavailable"
            ? "unavailable"
            : "rejected";
    return new PlatformApiError("slack", code, `Slack: ${slack}`);
  }
  if (e.code === ErrorCode.HTTPError)
    return new PlatformApiError("slack", (e.statusCode ?? 500) >= 500 ? "unavailable" : "rejected", `Slack answered HTTP ${e.statusCode ?? "?"}`);
  if (e.code === ErrorCode.RequestError) return new PlatformApiError("slack", "network", `Slack unreachable: ${e.message ?? ""}`);
  return err instanceof Error ? err : new Error(String(err));
}

const call = <T>(fn: () => Promise<T>) => mapErrors(fn, toPlatformError);

/** Slack over the Events API in and the Web API (@slack/web-api) out. */
export class SlackAdapter implements PlatformAdapter {
  readonly name = "slack" as const;
  readonly capabilities = SLACK_CAPABILITIES;
  readonly targets = slackTargets;
  readonly commands: CommandStyle = {
    prefix: "/hermes ",
    howToTalk: "Message me directly, mention me in a channel, reply in a thread I am in, or type /hermes <your question>.",
  };
  readonly #s: SlackSettings;
  readonly #client: WebClient;
  readonly #fetch: typeof fetch;

  constructor(settings: SlackSettings) {
    this.#s = settings;
    this.#fetch = settings.fetch ?? ((input, init) => fetch(input, init));
    this.#client = new WebClient(settings.botToken, {
      slackApiUrl: settings.apiUrl.endsWith("/") ? settings.apiUrl : `${settings.apiUrl}/`,
      fetch: workerdSafeFetch(this.#fetch),
      // 429s come back as errors carrying retry-after; the reply streamer honours them.
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
      timeout: PLATFORM_TIMEOUT_MS,
      // No queue in the client: its default (100 at a time) starts a waiting call from the
      // call that finished, in that caller's I/O context. One adapter serves every object of
      // an isolate, so a session's postMessage then ran on behalf of another Durable Object,
      // and workerd refused to let it read its own answer ("Cannot perform I/O on behalf of
      // a different Durable Object"): the reply counted as failed and was posted again.
      maxRequestConcurrency: Number.POSITIVE_INFINITY,
    });
  }

  verify(headers: Headers, rawBody: Uint8Array, now: number): Promise<Verification> {
    return verifySlack(headers, rawBody, this.#s.signingSecret, now);
  }

  ingest(body: string, headers: Headers): Ingest {
    return parseSlackBody(body, headers.get("content-type") ?? "");
  }

  ack(_event: PlatformEvent): Response {
    return new Response(null, { status: 200 });
  }

  /** Slash commands answer with their reply in the HTTP response (seen only by the user); events cannot. */
  answerInline(event: PlatformEvent, text: string): Response | null {
    if (!event.deliveryId.startsWith("slash:")) return null;
    return Response.json({ response_type: "ephemeral", text: renderParts(text, SLACK_RENDER, "final")[0]?.text ?? "" });
  }

  /** A slash command's later answer: POSTed to its `response_url`, seen only by the user. */
  async #respond(url: string, text: string): Promise<string> {
    let res: Response;
    try {
      res = await this.#fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ response_type: "ephemeral", text }),
        signal: AbortSignal.timeout(PLATFORM_TIMEOUT_MS),
      });
    } catch (err) {
      throw new PlatformApiError("slack", "network", `Slack unreachable: ${errorMessage(err)}`);
    }
    await res.body?.cancel();
    if (!res.ok)
      throw new PlatformApiError(
        "slack",
        res.status >= 500 ? "unavailable" : res.status === 404 ? "not_found" : "rejected",
        `Slack response_url answered HTTP ${res.status}`,
        { status: res.status },
      );
    return "response_url";
  }

  async #send(target: ReplyTarget, part: Part): Promise<string> {
    const t = slackTargets.read(target);
    if (t.responseUrl) return this.#respond(t.responseUrl, part.text);
    const res = await call(() => this.#client.chat.postMessage({ channel: t.channel, text: part.text, ...(t.threadTs ? { thread_ts: t.threadTs } : {}) }));
    return String(res.ts);
  }

  async #edit(target: ReplyTarget, id: string, part: Part): Promise<void> {
    const t = slackTargets.read(target);
    if (t.responseUrl) return void (await this.#respond(t.responseUrl, part.text));
    await call(() => this.#client.chat.update({ channel: t.channel, ts: id, text: part.text }));
  }

  show(target: ReplyTarget, markdown: string, ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
    const io = { scope: `slack|${target.ref}`, send: (p: Part) => this.#send(target, p), edit: (id: string, p: Part) => this.#edit(target, id, p) };
    return showMarkdown(io, markdown, SLACK_RENDER, ids, mode);
  }

  async post(target: ReplyTarget, markdown: string): Promise<string[]> {
    return (await this.show(target, markdown, [], "final")).ids;
  }

  /** Slack threads hang off a message: the seed message's ts anchors the thread. */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    // The title is the user's text: escaped, it cannot become a mention (<!channel>) or a link.
    const title = name.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const res = await call(() => this.#client.chat.postMessage({ channel: parentChatId, text: `${HANDOFF_SEED}\n*${title}*` }));
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

  async destination(chatId: string, threadId: string | null) {
    const dm = chatId.startsWith("D");
    const scopeId = await this.workspaceId();
    return {
      source: { platform: "slack" as const, scopeId, chatType: dm ? ("dm" as const) : ("group" as const), chatId, threadId },
      target: slackTarget(chatId, threadId, dm),
    };
  }

  download(a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
    return downloadSlackFile({ apiUrl: this.#s.apiUrl, botToken: this.#s.botToken, fetch: this.#fetch }, a, opts);
  }

  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null } {
    return slackTargets.where(slackTargets.read(target));
  }

  health(origin: string): Promise<PlatformHealth> {
    return slackHealth(this.#client, origin);
  }
}
