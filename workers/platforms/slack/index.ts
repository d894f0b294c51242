import type { AuthTestResponse, ChatPostMessageResponse, ConversationsOpenResponse } from "@slack/web-api";
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
  type DirectChat,
} from "../types.ts";
import { parseSlackBody } from "./parse.ts";
import { slackTarget, slackTargets } from "./target.ts";
import type { Download } from "../../attachments/index.ts";
import { downloadSlackFile } from "./files.ts";
import { verifySlack } from "./verify.ts";
import { SlackCallError, slackApiBase, slackCall, type SlackClient, type SlackResult } from "./web-api.ts";
import { slackHealth } from "./health.ts";
import { errorMessage } from "../../log/index.ts";
import { fetchWithin } from "../deadline.ts";

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

/**
 * The workspace per API URL and token, once known. Only the answer is kept, never a pending
 * call: one adapter serves every object of an isolate, and a promise resolved by I/O in one
 * object's request and awaited in another's is how a continuation ends up in the wrong I/O
 * context (docs/startup.md). Two first callers at once each ask; the answer is the same.
 */
const teamIds = new Map<string, string>();

export const HANDOFF_SEED = "🔀 A session was handed off here from the CLI; the conversation continues in this thread.";

function toPlatformError(err: unknown): Error {
  if (!(err instanceof SlackCallError)) return err instanceof Error ? err : new Error(String(err));
  if (err.kind === "rate_limited") return new PlatformApiError("slack", "rate_limited", "Slack rate limit", { status: 429, retryAfter: err.retryAfter });
  if (err.kind === "platform") {
    const slack = err.data?.error;
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
  if (err.kind === "http")
    return new PlatformApiError("slack", (err.statusCode ?? 500) >= 500 ? "unavailable" : "rejected", `Slack answered HTTP ${err.statusCode ?? "?"}`);
  return new PlatformApiError("slack", "network", `Slack unreachable: ${err.message}`);
}

/** Slack over the Events API in and the Web API out (over fetch: ./web-api.ts). */
export class SlackAdapter implements PlatformAdapter {
  readonly name = "slack" as const;
  readonly capabilities = SLACK_CAPABILITIES;
  readonly targets = slackTargets;
  readonly commands: CommandStyle = {
    prefix: "/hermes ",
    howToTalk: "Message me directly, mention me in a channel, reply in a thread I am in, or type /hermes <your question>.",
  };
  readonly #s: SlackSettings;
  readonly #client: SlackClient;
  readonly #fetch: typeof fetch;

  constructor(settings: SlackSettings) {
    this.#s = settings;
    this.#fetch = settings.fetch ?? ((input, init) => fetch(input, init));
    // Every call goes out at once from its own caller, never from a queue: a queued call was
    // started by the call that finished before it, in that caller's I/O context, and one
    // adapter serves every object of an isolate, so a session's postMessage ran on behalf of
    // another Durable Object, which workerd refused ("Cannot perform I/O on behalf of a
    // different Durable Object"): the reply counted as failed and was posted again. 429s come
    // back as errors carrying retry-after; the reply streamer honours them.
    this.#client = { token: settings.botToken, apiUrl: slackApiBase(settings.apiUrl), fetch: this.#fetch, timeoutMs: PLATFORM_TIMEOUT_MS };
  }

  /** One Web API call, its failures as PlatformApiErrors. */
  #call<T = SlackResult>(method: string, params: Record<string, unknown>): Promise<T> {
    return mapErrors(() => slackCall<T>(this.#client, method, params), toPlatformError);
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
      res = await fetchWithin(this.#fetch, PLATFORM_TIMEOUT_MS, url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ response_type: "ephemeral", text }),
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
    const res = await this.#call<ChatPostMessageResponse>("chat.postMessage", {
      channel: t.channel,
      text: part.text,
      ...(t.threadTs ? { thread_ts: t.threadTs } : {}),
    });
    return String(res.ts);
  }

  async #edit(target: ReplyTarget, id: string, part: Part): Promise<void> {
    const t = slackTargets.read(target);
    if (t.responseUrl) return void (await this.#respond(t.responseUrl, part.text));
    await this.#call("chat.update", { channel: t.channel, ts: id, text: part.text });
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
    const res = await this.#call<ChatPostMessageResponse>("chat.postMessage", { channel: parentChatId, text: `${HANDOFF_SEED}\n*${title}*` });
    return res.ts ? { chatId: parentChatId, threadId: String(res.ts) } : null;
  }

  /** The workspace this token belongs to (auth.test), kept once known for the isolate's life. */
  async workspaceId(): Promise<string> {
    const key = `${this.#s.apiUrl}|${this.#s.botToken}`;
    const known = teamIds.get(key);
    if (known !== undefined) return known;
    const team = String((await this.#call<AuthTestResponse>("auth.test", {})).team_id ?? "");
    teamIds.set(key, team);
    return team;
  }

  /** The DM with a user (`conversations.open`, scope `im:write`: the same channel every time). */
  async directTarget(userId: string): Promise<DirectChat> {
    const res = await this.#call<ConversationsOpenResponse>("conversations.open", { users: userId });
    const chatId = res.channel?.id;
    if (!chatId) throw new PlatformApiError("slack", "rejected", `Slack opened no DM with ${userId.slice(0, 40)}`);
    return { chatId, ...(await this.destination(chatId, null)), topics: false };
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
    return slackHealth(() => slackCall<AuthTestResponse>(this.#client, "auth.test", {}), origin);
  }
}
