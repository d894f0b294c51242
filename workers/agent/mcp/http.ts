import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { McpSdk } from "../../lazy.ts";
import type { TransportPlan } from "./connection.ts";
import { RequestTracker, capResponse } from "./tracker.ts";

/** Largest HTTP answer read for one request (a tool result, a tool list). */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** The SDK's two HTTP transports, each telling the tracker which call a message belongs to. Made once the SDK is loaded. */
function trackedTransports(sdk: McpSdk) {
  class TrackedStreamableHttp extends sdk.StreamableHTTPClientTransport {
    readonly #tracker: RequestTracker;
    constructor(url: URL, fetchImpl: typeof fetch, tracker: RequestTracker) {
      super(url, { fetch: fetchImpl });
      this.#tracker = tracker;
    }
    override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
      this.#tracker.claim(message);
      return super.send(message, options);
    }
  }
  class TrackedSse extends sdk.SSEClientTransport {
    readonly #tracker: RequestTracker;
    constructor(url: URL, fetchImpl: typeof fetch, tracker: RequestTracker) {
      super(url, { fetch: fetchImpl });
      this.#tracker = tracker;
    }
    override send(message: JSONRPCMessage): Promise<void> {
      this.#tracker.claim(message);
      return super.send(message);
    }
  }
  return { TrackedStreamableHttp, TrackedSse };
}

let transports: { sdk: McpSdk; classes: ReturnType<typeof trackedTransports> } | null = null;

/** The tracked transport classes for `sdk`, made on first use. */
function transportsOf(sdk: McpSdk): ReturnType<typeof trackedTransports> {
  if (transports?.sdk !== sdk) transports = { sdk, classes: trackedTransports(sdk) };
  return transports.classes;
}

/**
 * The fetch the transports use for one server: adds the bearer token (only towards the
 * server's own origin, so a redirect elsewhere never carries it), gives a tracked request
 * its call's signal, and caps the size of POST answers.
 */
export function serverFetch(base: typeof fetch, opts: { origin: string; token?: string | undefined; tracker: RequestTracker; maxBytes: number }): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    if (opts.token && url.origin === opts.origin) headers.set("authorization", `Bearer ${opts.token}`);
    const scope = opts.tracker.scopeFor(init?.body);
    const signals = [init?.signal, scope?.signal].filter((s): s is AbortSignal => s instanceof AbortSignal);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const res = await base(input, { ...init, headers, ...(signal ? { signal } : {}) });
    return (init?.method ?? "GET").toUpperCase() === "POST" && res.ok ? capResponse(res, opts.maxBytes, scope) : res;
  }) as typeof fetch;
}

/**
 * An older server answers the Streamable HTTP POST with 4xx (404/405, or 400 for a GET-only
 * endpoint); then the HTTP+SSE transport of protocol 2024-11-05 is tried. Refused
 * credentials (401/403) are not a reason to try another transport.
 */
function olderServer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" && code >= 400 && code < 500 && code !== 401 && code !== 403 && code !== 429;
}

/** Streamable HTTP first, then the HTTP+SSE fallback, both through {@link serverFetch}. */
export function httpPlans(url: string, fetchImpl: typeof fetch, tracker: RequestTracker): TransportPlan[] {
  return [
    { create: (sdk) => new (transportsOf(sdk).TrackedStreamableHttp)(new URL(url), fetchImpl, tracker), fallback: olderServer },
    { create: (sdk) => new (transportsOf(sdk).TrackedSse)(new URL(url), fetchImpl, tracker) },
  ];
}
