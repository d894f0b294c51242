/**
 * Fake Telegram, Discord and Slack APIs, written against web Request/Response so the same
 * fakes serve workerd tests (behind the fetch stub) and end-to-end runs (on loopback).
 * They record every call and answer 404 to anything they do not know.
 */
import { DISCORD_TEST, SLACK_TEST, TELEGRAM_TEST } from "./signing.ts";

export interface ApiCall {
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** The JSON the fake answered with (null when it was not JSON). */
  answer?: unknown;
}

/** A scripted failure for the next call matching `match`. */
interface Failure {
  match: string;
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The base of every fake API: records calls, scripted failures, waiters (also for fakes in files of their own). */
export abstract class FakeApi {
  readonly calls: ApiCall[] = [];
  #failures: Failure[] = [];
  #seq = 100;
  #waiters: Array<{ pred: (c: ApiCall) => boolean; resolve: (c: ApiCall) => void }> = [];

  /**
   * Resolves with the first call (already made, or still to come) matching `pred`. For
   * Node tests: in workerd, wait on the session's object instead (see worker helpers).
   */
  waitFor(pred: (c: ApiCall) => boolean): Promise<ApiCall> {
    const seen = this.calls.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }

  /** Makes the next call whose path contains `match` fail. */
  failNext(match: string, status: number, body: unknown, headers?: Record<string, string>): void {
    this.#failures.push({ match, status, body, ...(headers ? { headers } : {}) });
  }

  reset(): void {
    this.calls.length = 0;
    this.#failures = [];
  }

  protected nextId(): number {
    return ++this.#seq;
  }

  /** Calls whose path ends with `suffix`. */
  called(suffix: string): ApiCall[] {
    return this.calls.filter((c) => c.path.endsWith(suffix));
  }

  async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    // Decoded from bytes: workerd warns on .text() of a body whose type is not text (uploads, forms).
    const text = req.method === "GET" ? "" : new TextDecoder().decode(await req.arrayBuffer());
    const type = req.headers.get("content-type") ?? "";
    let body: Record<string, unknown> = {};
    if (text) {
      if (type.includes("application/x-www-form-urlencoded")) body = Object.fromEntries(new URLSearchParams(text));
      else {
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = { raw: text };
        }
      }
    }
    const call: ApiCall = { method: req.method, path: url.pathname + url.search, body };
    const f = this.#failures.findIndex((x) => call.path.includes(x.match));
    let res: Response;
    if (f >= 0) {
      const [failure] = this.#failures.splice(f, 1);
      res = Response.json(failure!.body, { status: failure!.status, ...(failure!.headers ? { headers: failure!.headers } : {}) });
    } else res = this.answer(call, req);
    // Recorded (with the answer) before anyone waiting on it is told. A file the fake serves is
    // not parsed: workerd warns on .json() of a body whose type is not text (image/png, …).
    call.answer = /json/i.test(res.headers.get("content-type") ?? "")
      ? await res
          .clone()
          .json()
          .catch(() => null)
      : null;
    this.calls.push(call);
    for (const w of this.#waiters.filter((x) => x.pred(call))) {
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve(call);
    }
    return res;
  }

  protected abstract answer(call: ApiCall, req: Request): Response;
}

/** A file a fake serves: its bytes and type. */
export interface FakeFile {
  bytes: Uint8Array;
  mime: string;
}

/** A file's bytes as a response (Content-Length set, as real file servers do). */
function fileResponse(f: FakeFile): Response {
  return new Response(f.bytes, { headers: { "content-type": f.mime, "content-length": String(f.bytes.byteLength) } });
}

/**
 * Files at paths on one origin (Slack's `url_private` host, Discord's CDN), served to GETs;
 * with `token`, only to `Authorization: Bearer <token>`. Records every request.
 */
export class FakeFiles {
  readonly #files = new Map<string, FakeFile>();
  readonly requests: Array<{ path: string; authorization: string | null }> = [];
  readonly #token: string | null;

  constructor(token: string | null = null) {
    this.#token = token;
  }

  /** Serves `bytes` at `path` (a path with its query, as the URL will carry it). */
  serve(path: string, bytes: Uint8Array | string, mime: string): void {
    this.#files.set(path, { bytes: typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes, mime });
  }

  reset(): void {
    this.#files.clear();
    this.requests.length = 0;
  }

  handle(req: Request): Response {
    const url = new URL(req.url);
    const path = url.pathname + url.search;
    this.requests.push({ path, authorization: req.headers.get("authorization") });
    if (this.#token && req.headers.get("authorization") !== `Bearer ${this.#token}`) return new Response("forbidden", { status: 403 });
    const f = req.method === "GET" ? this.#files.get(path) : undefined;
    return f ? fileResponse(f) : new Response("not found", { status: 404 });
  }
}

/** The Bot API at `<root>/bot<token>/<method>`, and its file server at `<root>/file/bot<token>/<path>`. */
export class FakeTelegram extends FakeApi {
  /** Files by file_id: `getFile` gives their path, the file server their bytes. */
  readonly #files = new Map<string, FakeFile & { path: string }>();
  /** Chats where createForumTopic works (forum supergroups, private chats with topics). */
  readonly forums = new Set<string>();
  /** The webhook URL setWebhook set last. */
  webhookUrl = "";
  /** Merged into getWebhookInfo's answer (fields as in the Bot API's WebhookInfo). */
  webhookInfo: Record<string, unknown> = {};

  override reset(): void {
    super.reset();
    this.webhookUrl = "";
    this.webhookInfo = {};
    this.#files.clear();
  }

  /** Makes a file_id downloadable (getFile, then the file server). */
  serveFile(fileId: string, bytes: Uint8Array | string, mime = "application/octet-stream", path = `documents/file_${this.#files.size}`): void {
    this.#files.set(fileId, { bytes: typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes, mime, path });
  }

  /** Sent and edited texts, in order, per chat. */
  texts(chatId: string | number): string[] {
    return this.calls
      .filter((c) => (c.path.endsWith("/sendMessage") || c.path.endsWith("/editMessageText")) && String(c.body.chat_id) === String(chatId))
      .map((c) => String(c.body.text));
  }

  protected answer(call: ApiCall): Response {
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(call.path);
    if (file) {
      const f = file[1] === TELEGRAM_TEST.token ? [...this.#files.values()].find((x) => x.path === decodeURIComponent(file[2]!)) : undefined;
      return f ? fileResponse(f) : Response.json({ ok: false, error_code: 404, description: "Not Found" }, { status: 404 });
    }
    const m = /\/bot([^/]+)\/(\w+)$/.exec(call.path);
    if (!m) return Response.json({ ok: false, error_code: 404, description: "Not Found" }, { status: 404 });
    if (m[1] !== TELEGRAM_TEST.token) return Response.json({ ok: false, error_code: 401, description: "Unauthorized" }, { status: 401 });
    const ok = (result: unknown) => Response.json({ ok: true, result });
    switch (m[2]) {
      case "getMe":
        return ok({
          id: TELEGRAM_TEST.botId,
          is_bot: true,
          first_name: "Hermes",
          username: TELEGRAM_TEST.username,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        });
      case "sendMessage":
        return ok({ message_id: this.nextId(), date: 0, chat: { id: Number(call.body.chat_id), type: "private" }, text: call.body.text });
      case "editMessageText":
        return ok(true);
      case "sendChatAction":
        return ok(true);
      case "getFile": {
        const f = this.#files.get(String(call.body.file_id));
        if (!f) return Response.json({ ok: false, error_code: 400, description: "Bad Request: invalid file_id" }, { status: 400 });
        return ok({ file_id: call.body.file_id, file_unique_id: `u-${call.body.file_id}`, file_size: f.bytes.byteLength, file_path: f.path });
      }
      case "setWebhook":
        this.webhookUrl = String(call.body.url ?? "");
        return ok(true);
      case "setMyCommands":
        return ok(true);
      case "getWebhookInfo":
        return ok({ url: this.webhookUrl, has_custom_certificate: false, pending_update_count: 0, ...this.webhookInfo });
      case "createForumTopic":
        if (!this.forums.has(String(call.body.chat_id)))
          return Response.json({ ok: false, error_code: 400, description: "Bad Request: the chat is not a forum" }, { status: 400 });
        return ok({ message_thread_id: this.nextId(), name: call.body.name, icon_color: 0 });
      default:
        return Response.json({ ok: false, error_code: 404, description: "Not Found: method not found" }, { status: 404 });
    }
  }
}

/** The server the fake Discord puts its threads in (a started thread's channel object names it). */
export const FAKE_GUILD_ID = "880000000000000001";

/** The REST API at `<base>/…` and the interaction webhooks. */
export class FakeDiscord extends FakeApi {
  /** The interactions endpoint the application has (GET/PATCH /applications/@me). */
  interactionsUrl = "";
  /** What `GET /gateway/bot` names (a FakeDiscordGateway's url); empty: 404. */
  gatewayUrl = "";
  /** The application's flags (GET /applications/@me): 1 << 19 is GATEWAY_MESSAGE_CONTENT_LIMITED. */
  appFlags = 1 << 19;
  /** `session_start_limit.remaining` of GET /gateway/bot (0: today's identifies are spent, wait `reset_after`, 60 s here). */
  sessionStartsLeft = 999;
  /** Threads this fake made (GET /channels/{id} says type 11 for them, 0 for anything else). */
  readonly threads = new Set<string>();

  override reset(): void {
    super.reset();
    this.interactionsUrl = "";
    this.appFlags = 1 << 19;
    this.sessionStartsLeft = 999;
  }

  /** Contents posted or edited, in order. */
  contents(): string[] {
    return this.calls.filter((c) => c.method !== "GET" && typeof c.body.content === "string").map((c) => String(c.body.content));
  }

  protected answer(call: ApiCall, req: Request): Response {
    const p = call.path.replace(/^.*\/api\/v10/, "").replace(/\?.*$/, "");
    const hook = /^\/webhooks\/(\d+)\/([^/]+)(\/messages\/([^/]+))?$/.exec(p);
    if (hook) {
      if (hook[1] !== DISCORD_TEST.applicationId) return Response.json({ message: "Unknown Webhook" }, { status: 404 });
      return Response.json({ id: hook[4] && hook[4] !== "@original" ? hook[4] : String(this.nextId()), content: call.body.content });
    }
    if (req.headers.get("authorization") !== `Bot ${DISCORD_TEST.botToken}`) return Response.json({ message: "401: Unauthorized" }, { status: 401 });
    if (/^\/channels\/\d+\/typing$/.test(p)) return new Response(null, { status: 204 });
    // A DM channel with a user: the same channel every time (its id is the user's, prefixed, so tests can name it).
    if (p === "/users/@me/channels" && call.method === "POST")
      return Response.json({ id: `77${String(call.body.recipient_id)}`, type: 1, recipients: [{ id: String(call.body.recipient_id) }] });
    if (/^\/channels\/\d+\/messages\/\d+\/threads$/.test(p)) {
      const id = String(this.nextId());
      this.threads.add(id);
      return Response.json({ id, name: call.body.name, type: 11, guild_id: FAKE_GUILD_ID });
    }
    if (p === "/gateway/bot" && this.gatewayUrl)
      return Response.json({
        url: this.gatewayUrl,
        shards: 1,
        session_start_limit: {
          total: 1000,
          remaining: this.sessionStartsLeft,
          reset_after: this.sessionStartsLeft > 0 ? 14_400_000 : 60_000,
          max_concurrency: 1,
        },
      });
    const channel = /^\/channels\/(\d+)$/.exec(p);
    if (channel && call.method === "GET") return Response.json({ id: channel[1], type: this.threads.has(channel[1] ?? "") ? 11 : 0, guild_id: FAKE_GUILD_ID });
    if (/^\/channels\/\d+\/messages(\/\d+)?$/.test(p)) return Response.json({ id: String(this.nextId()), content: call.body.content });
    if (/^\/applications\/\d+\/commands$/.test(p) && call.method === "PUT") {
      if (!p.includes(`/${DISCORD_TEST.applicationId}/`)) return Response.json({ message: "Unknown Application" }, { status: 404 });
      return Response.json(Array.isArray(call.body) ? call.body : Object.values(call.body));
    }
    if (p === "/applications/@me" && call.method === "PATCH") {
      const url = String(call.body.interactions_endpoint_url ?? "");
      if (!url.startsWith("https://")) return Response.json({ message: "Invalid Form Body: interactions_endpoint_url could not be verified" }, { status: 400 });
      this.interactionsUrl = url;
      return Response.json({ id: DISCORD_TEST.applicationId, interactions_endpoint_url: url });
    }
    if (p === "/applications/@me" && call.method === "GET") {
      return Response.json({ id: DISCORD_TEST.applicationId, name: "Hermes", interactions_endpoint_url: this.interactionsUrl || null, flags: this.appFlags });
    }
    return Response.json({ message: "404: Not Found" }, { status: 404 });
  }
}

/** The Web API at `<url>/<method>`. */
export class FakeSlack extends FakeApi {
  texts(channel: string): string[] {
    return this.calls
      .filter((c) => (c.path.endsWith("/chat.postMessage") || c.path.endsWith("/chat.update")) && c.body.channel === channel)
      .map((c) => String(c.body.text));
  }

  /** Answers posted to slash commands' `response_url`s (seen only by the user who typed the command). */
  responses(): string[] {
    return this.calls.filter((c) => c.path.startsWith("/commands/")).map((c) => String(c.body.text));
  }

  protected answer(call: ApiCall, req: Request): Response {
    // A slash command's response_url (hooks.slack.com/commands/…): no token, just the answer.
    if (call.path.startsWith("/commands/")) return new Response("ok");
    const method = call.path.replace(/\?.*$/, "").split("/").pop();
    if (req.headers.get("authorization") !== `Bearer ${SLACK_TEST.token}`) return Response.json({ ok: false, error: "invalid_auth" });
    switch (method) {
      case "auth.test":
        return Response.json({ ok: true, team_id: SLACK_TEST.team, user_id: SLACK_TEST.botUserId, bot_id: "B0BOT" });
      case "chat.postMessage":
        return Response.json({ ok: true, channel: call.body.channel, ts: `1700000000.${String(this.nextId()).padStart(6, "0")}` });
      case "chat.update":
        return Response.json({ ok: true, channel: call.body.channel, ts: call.body.ts });
      case "conversations.open":
        // The DM with a user, named after them (a real one is D + letters).
        return Response.json({ ok: true, channel: { id: `D${String(call.body.users)}` } });
      default:
        return Response.json({ ok: false, error: "unknown_method" }, { status: 404 });
    }
  }
}
