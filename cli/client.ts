import { readFileSync } from "node:fs";
import path from "node:path";
import { parseSse, type SseEvent } from "../workers/agent/index.ts";

/** A failure to show the user in one line, with the exit code to leave with. */
export class CliError extends Error {
  override readonly name = "CliError";
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The API said no: keeps the status and code for callers that handle some of them. */
export class ApiRefusal extends CliError {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export const DEFAULT_URL = "http://127.0.0.1:8787";

function isLoopback(url: string): boolean {
  try {
    const h = new URL(url).hostname;
    return h === "127.0.0.1" || h === "localhost" || h === "[::1]";
  } catch {
    return false;
  }
}

/** Reads one KEY=value from a dotenv-style file; null when absent. */
export function readDevVar(file: string, key: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line);
    if (m && m[1] === key) return m[2]!.replace(/^(["'])(.*)\1$/, "$2");
  }
  return null;
}

/** Where the CLI talks to, and with which token. */
export interface Target {
  baseUrl: string;
  token: string | undefined;
  /** Where the token came from, for error messages. */
  tokenSource: "HERMES_EDGE_TOKEN" | ".dev.vars" | "none";
}

/**
 * HERMES_EDGE_URL and HERMES_EDGE_TOKEN; against a local Worker with no token set, the
 * API_TOKEN that `npm start` wrote into ./.dev.vars.
 */
export function resolveTarget(env: Record<string, string | undefined>, cwd: string): Target {
  const baseUrl = (env.HERMES_EDGE_URL?.trim() || DEFAULT_URL).replace(/\/+$/, "");
  const token = env.HERMES_EDGE_TOKEN?.trim();
  if (token) return { baseUrl, token, tokenSource: "HERMES_EDGE_TOKEN" };
  if (isLoopback(baseUrl)) {
    const local = readDevVar(path.join(cwd, ".dev.vars"), "API_TOKEN");
    if (local) return { baseUrl, token: local, tokenSource: ".dev.vars" };
  }
  return { baseUrl, token: undefined, tokenSource: "none" };
}

function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/** The Worker's HTTP API, with failures turned into one-line {@link CliError}s. */
export class ApiClient {
  readonly target: Target;
  readonly #fetch: typeof fetch;

  constructor(target: Target, fetchImpl: typeof fetch) {
    this.target = target;
    this.#fetch = fetchImpl;
  }

  async #send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.target.token) headers.authorization = `Bearer ${this.target.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await this.#fetch(`${this.target.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new CliError(
        `cannot reach hermes-edge at ${this.target.baseUrl} (${networkCause(err)}). Is the Worker running? Start it with \`npm start\` or \`npm run dev\`, or set HERMES_EDGE_URL.`,
      );
    }
    if (res.ok) return res;
    throw await this.#refusal(res);
  }

  async #refusal(res: Response): Promise<CliError> {
    let code = "http_error";
    let message = `HTTP ${res.status}`;
    try {
      const body = (await res.json()) as { error?: { code?: string; message?: string } };
      if (body.error?.code) code = body.error.code;
      if (body.error?.message) message = body.error.message;
    } catch {
      // not our JSON error shape
    }
    if (res.status === 401) {
      const hint =
        this.target.tokenSource === "none"
          ? "HERMES_EDGE_TOKEN is not set; set it to the Worker's API_TOKEN"
          : `the token from ${this.target.tokenSource} does not match the Worker's API_TOKEN`;
      return new ApiRefusal(401, code, `the Worker at ${this.target.baseUrl} rejected the token (401): ${hint}`);
    }
    if (res.status === 503 && code === "not_configured") {
      return new ApiRefusal(503, code, `the Worker at ${this.target.baseUrl} is not configured: ${message}`);
    }
    return new ApiRefusal(res.status, code, message);
  }

  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await this.#send(method, path, body, signal);
    return (await res.json()) as T;
  }

  /** Starts a turn and yields its server-sent events. */
  async *turn(sessionId: string, content: string, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    const res = await this.#send("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/turns`, { content }, signal);
    if (!res.body) throw new CliError("the Worker sent an empty turn stream");
    yield* parseSse(res.body);
  }
}
