import { readFileSync } from "node:fs";
import path from "node:path";
import { parseSse, type SseEvent } from "../workers/agent/index.ts";
import { isLoopbackUrl } from "../workers/agent/loopback.ts";
import { ApiRefusal, CliError } from "./errors.ts";
import { safeJsonText, safeText, safeValue, type CliIo } from "./io.ts";
import { configFile, DEFAULT_PROFILE, readConfig } from "./profiles.ts";
import { errorMessage } from "../workers/log/index.ts";

export { ApiRefusal, CliError } from "./errors.ts";

export const DEFAULT_URL = "http://127.0.0.1:8787";

/** Reads one KEY=value from a dotenv-style file; null when absent. */
export function readDevVar(file: string, key: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split(/\r?\n/)) {
    const [, name, value] = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line) ?? [];
    if (name === key && value !== undefined) return value.replace(/^(["'])(.*)\1$/, "$2");
  }
  return null;
}

/** Where the CLI talks to, and with which token. */
export interface Target {
  baseUrl: string;
  token: string | undefined;
  /** Where the token came from, for error messages. */
  tokenSource: "HERMES_EDGE_TOKEN" | `profile '${string}'` | ".dev.vars" | "none";
}

/** `https://x/` → `https://x`. */
export function normaliseUrl(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

/**
 * The Worker and token, first found wins: HERMES_EDGE_URL / HERMES_EDGE_TOKEN; the profile
 * (HERMES_EDGE_PROFILE, else "default") that `hermes-edge login` saved; for a loopback
 * Worker, the API_TOKEN that `npm start` wrote into ./.dev.vars. A profile's token is only
 * sent to that profile's URL.
 */
export function resolveTarget(io: Pick<CliIo, "env" | "cwd" | "configDir">): Target {
  const { env } = io;
  const envUrl = env.HERMES_EDGE_URL?.trim() ? normaliseUrl(env.HERMES_EDGE_URL) : undefined;
  const envToken = env.HERMES_EDGE_TOKEN?.trim() || undefined;
  const named = env.HERMES_EDGE_PROFILE?.trim() || undefined;
  const profileName = named ?? DEFAULT_PROFILE;
  // Only read the file when it can matter: the environment alone settles it otherwise.
  const profile = envUrl && envToken ? undefined : readConfig(configFile(io.configDir)).profiles[profileName];
  if (named && !profile && !(envUrl && envToken)) {
    throw new CliError(`HERMES_EDGE_PROFILE is '${named}', but there is no such profile (log in with \`hermes-edge login --profile ${named}\`)`);
  }
  const baseUrl = envUrl ?? (profile ? normaliseUrl(profile.url) : DEFAULT_URL);
  if (envToken) return { baseUrl, token: envToken, tokenSource: "HERMES_EDGE_TOKEN" };
  if (profile && normaliseUrl(profile.url) === baseUrl) return { baseUrl, token: profile.token, tokenSource: `profile '${profileName}'` };
  if (isLoopbackUrl(baseUrl)) {
    const local = readDevVar(path.join(io.cwd, ".dev.vars"), "API_TOKEN");
    if (local) return { baseUrl, token: local, tokenSource: ".dev.vars" };
  }
  return { baseUrl, token: undefined, tokenSource: "none" };
}

function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? errorMessage(err);
}

/** One event of a turn's stream: its name and its parsed data, every string in it safe to print. */
export interface TurnEvent {
  event: string;
  data: unknown;
}

/** What /health answers on a hermes-edge Worker. */
export interface Health {
  ok: boolean;
  service: "hermes-edge";
  version?: string;
}

/** The Worker's HTTP API, with failures turned into one-line {@link CliError}s. */
export class ApiClient {
  readonly target: Target;
  readonly #fetch: typeof fetch;

  constructor(target: Target, fetchImpl: typeof fetch) {
    this.target = target;
    this.#fetch = fetchImpl;
  }

  #notHermes(what: string): CliError {
    return new CliError(`${this.target.baseUrl} answers, but not as a hermes-edge Worker (${what}); check the URL (HERMES_EDGE_URL or \`hermes-edge login\`)`);
  }

  async #send(
    method: string,
    path: string,
    opts: { body?: unknown; raw?: { body: string; type: string }; signal?: AbortSignal | undefined; auth?: boolean } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.target.token && opts.auth !== false) headers.authorization = `Bearer ${this.target.token}`;
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    if (opts.raw) headers["content-type"] = opts.raw.type;
    const body = opts.raw ? opts.raw.body : opts.body !== undefined ? JSON.stringify(opts.body) : undefined;
    let res: Response;
    try {
      res = await this.#fetch(`${this.target.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      throw new CliError(
        `cannot reach hermes-edge at ${this.target.baseUrl} (${networkCause(err)}). Is the Worker running? Start it with \`npm start\` or \`npm run dev\`, or set HERMES_EDGE_URL.`,
      );
    }
    if (res.ok) return res;
    throw await this.#refusal(res, method, path);
  }

  async #refusal(res: Response, method: string, path: string): Promise<CliError> {
    type ErrorBody = { error?: { code?: unknown; message?: unknown } } | null;
    const body = (await res.json().catch(() => null)) as ErrorBody;
    const code = body?.error?.code;
    // Every answer of the Worker is JSON, errors `{"error":{"code","message"}}`; anything
    // else comes from something in front of it, or from another server.
    if (typeof code !== "string")
      return this.#notHermes(`${method} ${path.split("?")[0]}: HTTP ${res.status}, ${safeText(res.headers.get("content-type") ?? "no content type")}`);
    const message = typeof body?.error?.message === "string" ? safeText(body.error.message) : `HTTP ${res.status}`;
    if (res.status === 401) {
      const hint =
        this.target.tokenSource === "none"
          ? "no token is set; run `hermes-edge login`, or set HERMES_EDGE_TOKEN to the Worker's API_TOKEN"
          : this.target.tokenSource === "HERMES_EDGE_TOKEN"
            ? "HERMES_EDGE_TOKEN does not match the Worker's API_TOKEN (the variable overrides `hermes-edge login` and ./.dev.vars: fix it, or unset it)"
            : `the token from ${this.target.tokenSource} does not match the Worker's API_TOKEN`;
      return new ApiRefusal(401, code, `the Worker at ${this.target.baseUrl} rejected the token (401): ${hint}`);
    }
    if (res.status === 503 && code === "not_configured") {
      return new ApiRefusal(503, code, `the Worker at ${this.target.baseUrl} is not configured: ${message}`);
    }
    return new ApiRefusal(res.status, safeText(code), message);
  }

  async #readJson<T>(res: Response, what: string): Promise<T> {
    try {
      // Everything the Worker says passes here: a platform user's text (a title, a message)
      // must not drive the operator's terminal, whether stdout is one or a pipe.
      return safeValue((await res.json()) as T);
    } catch {
      throw this.#notHermes(`${what}: HTTP ${res.status}, ${safeText(res.headers.get("content-type") ?? "no content type")}, not JSON`);
    }
  }

  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.#send(method, path, { body, signal });
    return this.#readJson<T>(res, `${method} ${path.split("?")[0]}`);
  }

  /**
   * A route whose answer is not JSON (an export): its text, made safe to print: `text` strips
   * control characters, `jsonl` escapes them (the lines still import to the same sessions),
   * `file` leaves it exactly as sent, for a file the CLI writes and does not print.
   */
  async text(path: string, as: "text" | "jsonl" | "file", signal?: AbortSignal): Promise<string> {
    const text = await (await this.#send("GET", path, { signal })).text();
    return as === "file" ? text : as === "jsonl" ? safeJsonText(text) : safeText(text);
  }

  /** Sends `body` as it is (JSONL to import), and reads the JSON answer. */
  async sendText<T>(method: string, path: string, body: string, type: string): Promise<T> {
    const res = await this.#send(method, path, { raw: { body, type } });
    return this.#readJson<T>(res, `${method} ${path.split("?")[0]}`);
  }

  /**
   * GET /health, without the token (it must not go to a server that is not ours): throws
   * unless the answer is hermes-edge's.
   */
  async health(): Promise<Health> {
    const res = await this.#send("GET", "/health", { auth: false });
    const body = await this.#readJson<Partial<Health>>(res, "GET /health");
    if (body?.service !== "hermes-edge") throw this.#notHermes('GET /health does not say service "hermes-edge"');
    return body as Health;
  }

  /** Throws unless the token is accepted (a cheap authenticated request). */
  async checkToken(): Promise<void> {
    await this.json("GET", "/v1/sessions?limit=1");
  }

  /** Starts a turn and yields its server-sent events, their JSON data parsed and made safe to print. */
  async *turn(sessionId: string, content: string, signal?: AbortSignal): AsyncGenerator<TurnEvent> {
    const res = await this.#send("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/turns`, { body: { content }, signal });
    if (!res.body) throw new CliError("the Worker sent an empty turn stream");
    for await (const ev of parseSse(res.body)) {
      let data: unknown;
      try {
        data = safeValue(JSON.parse(ev.data) as unknown);
      } catch {
        continue; // not JSON: not an event this CLI knows
      }
      yield { event: ev.event, data };
    }
  }
}
