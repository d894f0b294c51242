import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { loadMcpSdk, type McpSdk } from "../../lazy.ts";
import { VERSION } from "../../version.ts";
import type { Redactor } from "./result.ts";
import { RequestTracker, type RequestScope } from "./tracker.ts";
import { errorMessage } from "../../log/index.ts";

/** Time, injectable for tests (the same shape as the reply streamer's clock). */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** One way to reach a server; several are tried in order (Streamable HTTP, then SSE). */
export interface TransportPlan {
  /** A transport made with the SDK, which is loaded on first use (workers/lazy.ts). */
  create(sdk: McpSdk): Transport;
  /** True when a failed first attempt means "try the next plan" (an older server). */
  fallback?: (err: unknown) => boolean;
}

/** How a server is reached and how long it may take. */
export interface ServerOptions {
  name: string;
  plans: TransportPlan[];
  redact: Redactor;
  clock: Clock;
  /** Limit of one `tools/call`. */
  callTimeoutMs: number;
  /** Limit of connecting, and of listing the tools. */
  listTimeoutMs: number;
  /** Ties HTTP requests to the call they belong to (per-request abort and size cap). */
  tracker?: RequestTracker;
  /** The server said its tool list changed. */
  onListChanged: () => void;
  /** The connection closed by itself (a child process that exited, say). */
  onClosed?: () => void;
  /** The secret a 401 points at, for the message ("check MCP_TOKEN_DOCS"). */
  tokenName?: string;
}

const CLIENT_INFO = { name: "hermes-edge", version: VERSION };
const MAX_LIST_PAGES = 10;

/** A server could not be used: the reason is short, redacted, and fit for the model. */
export class McpUnavailable extends Error {
  override readonly name = "McpUnavailable";
}

function httpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" && code >= 100 && code < 600 ? code : undefined;
}

/** Rejects with the signal's reason as soon as it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/**
 * One MCP server, connected on first use and again after it went away. Every operation has
 * a deadline on the injected clock; the caller's signal aborts it (the SDK then sends
 * `notifications/cancelled`, and over HTTP the request itself is aborted too).
 */
export class McpServerConnection {
  readonly name: string;
  readonly #o: ServerOptions;
  #client: Client | null = null;
  #connecting: Promise<Client> | null = null;
  /** The SDK, once a connection was tried (its error classes name the failures). */
  #sdk: McpSdk | null = null;

  constructor(opts: ServerOptions) {
    this.name = opts.name;
    this.#o = opts;
  }

  /** The server's tools, all pages. Throws {@link McpUnavailable}, or the signal's reason. */
  async listTools(signal?: AbortSignal): Promise<McpTool[]> {
    return this.#withRetry(this.#o.listTimeoutMs, signal, async (client, scope) => {
      const tools: McpTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const res = await this.#tracked(scope, () =>
          client.listTools(cursor ? { cursor } : undefined, { signal: scope.signal, timeout: this.#o.listTimeoutMs + 5_000 }),
        );
        tools.push(...res.tools);
        cursor = res.nextCursor;
        if (!cursor) break;
      }
      return tools;
    });
  }

  /** Calls one tool; resolves with the raw result. Throws {@link McpUnavailable}, or the signal's reason. */
  async callTool(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    return this.#withRetry(this.#o.callTimeoutMs, signal, (client, scope) =>
      this.#tracked(scope, () => client.callTool({ name: tool, arguments: args }, undefined, { signal: scope.signal, timeout: this.#o.callTimeoutMs + 5_000 })),
    );
  }

  /** Closes the connection (a child process is stopped); the next use connects again. */
  async close(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    if (client) await client.close().catch(() => undefined);
  }

  /**
   * Runs `op` with a connected client under a deadline. An HTTP 404 from a connected server
   * means its session is gone: one fresh connection and one more try.
   */
  async #withRetry<T>(ms: number, signal: AbortSignal | undefined, op: (client: Client, scope: RequestScope) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const scope = this.#scope(ms, signal);
      let client: Client | null = null;
      try {
        client = await raceAbort(this.#connected(), scope.signal);
        return await op(client, scope);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (attempt === 0 && client && httpStatus(err) === 404 && !scope.signal.aborted) {
          await this.#drop(client);
          continue;
        }
        throw this.#unavailable(err, scope, ms);
      } finally {
        scope.done();
      }
    }
  }

  #tracked<T>(scope: RequestScope, start: () => Promise<T>): Promise<T> {
    return this.#o.tracker ? this.#o.tracker.within(scope, start) : start();
  }

  /** A deadline on the clock, tied to the caller's signal. */
  #scope(ms: number, outer?: AbortSignal): RequestScope & { done(): void } {
    const ctrl = new AbortController();
    const scope = {
      signal: ctrl.signal,
      timedOut: false,
      failure: null as Error | null,
      fail(err: Error) {
        scope.failure ??= err;
        ctrl.abort(err);
      },
      done: () => {
        this.#o.clock.clearTimeout(timer);
        outer?.removeEventListener("abort", onAbort);
      },
    };
    const timer = this.#o.clock.setTimeout(() => {
      scope.timedOut = true;
      ctrl.abort(new McpUnavailable(`no answer within ${ms} ms`));
    }, ms);
    const onAbort = () => ctrl.abort(outer?.reason);
    if (outer?.aborted) ctrl.abort(outer.reason);
    else outer?.addEventListener("abort", onAbort, { once: true });
    return scope;
  }

  #connected(): Promise<Client> {
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = null));
    return this.#connecting;
  }

  async #connect(): Promise<Client> {
    let last: unknown = new McpUnavailable("no way to connect is configured");
    const sdk = (this.#sdk ??= await loadMcpSdk());
    for (const plan of this.#o.plans) {
      // The SDK's default validator (ajv) compiles schemas to code, which workerd forbids.
      const client = new sdk.Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: new sdk.CfWorkerJsonSchemaValidator() });
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => this.#o.onListChanged());
      const scope = this.#scope(this.#o.listTimeoutMs);
      try {
        await raceAbort(client.connect(plan.create(sdk), { signal: scope.signal, timeout: this.#o.listTimeoutMs + 5_000 }), scope.signal);
        client.onclose = () => {
          if (this.#client !== client) return;
          this.#client = null;
          this.#o.onClosed?.();
        };
        this.#client = client;
        return client;
      } catch (err) {
        await client.close().catch(() => undefined);
        last = scope.timedOut ? new McpUnavailable(`no answer within ${this.#o.listTimeoutMs} ms`) : err;
        if (scope.timedOut || !plan.fallback?.(err)) break;
      } finally {
        scope.done();
      }
    }
    throw this.#unavailable(last);
  }

  async #drop(client: Client): Promise<void> {
    if (this.#client === client) this.#client = null;
    await client.close().catch(() => undefined);
  }

  /** A short, redacted reason; the connection is dropped when the server seems gone. */
  #unavailable(err: unknown, scope?: { timedOut: boolean; failure: Error | null }, ms?: number): McpUnavailable {
    if (scope?.timedOut) return new McpUnavailable(`no answer within ${ms} ms`);
    if (scope?.failure) return new McpUnavailable(this.#o.redact(scope.failure.message));
    if (err instanceof McpUnavailable) return new McpUnavailable(this.#o.redact(err.message));
    const status = httpStatus(err);
    const text = errorMessage(err);
    const sdk = this.#sdk;
    const mcpError = sdk && err instanceof sdk.McpError ? err : null;
    let reason: string;
    if (status === 401 || status === 403)
      reason = `the server refused the credentials (HTTP ${status})${this.#o.tokenName ? `; check the secret ${this.#o.tokenName}` : ""}`;
    else if (status !== undefined && status >= 500) reason = `the server failed (HTTP ${status})`;
    else if (status !== undefined) reason = `the server answered HTTP ${status}`;
    else if (mcpError?.code === sdk?.ErrorCode.RequestTimeout) reason = "the request timed out";
    else if (mcpError?.code === sdk?.ErrorCode.ConnectionClosed) reason = "the connection to the server closed";
    else if (mcpError) reason = `the server reported an error: ${text}`;
    else reason = `cannot reach the server (${text})`;
    if (status !== undefined && status >= 500) void this.close();
    return new McpUnavailable(this.#o.redact(reason).replace(/\s+/g, " ").slice(0, 300));
  }
}
