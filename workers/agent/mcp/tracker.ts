import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** What one call (or listing) attaches to the HTTP requests it sends. */
export interface RequestScope {
  /** Aborted by the turn's signal, the deadline, or {@link RequestScope.fail}. */
  readonly signal: AbortSignal;
  timedOut: boolean;
  failure: Error | null;
  /** Ends the call with this error (a response over the size cap, say). */
  fail(err: Error): void;
}

/**
 * Links HTTP requests to the call that sent them. The SDK aborts a cancelled request only
 * locally (it sends `notifications/cancelled` and stops waiting); the POST carrying it stays
 * open. The SDK sends a request synchronously from `callTool`/`listTools`, so a transport's
 * `send` can record which scope is current ({@link RequestTracker.claim}); the fetch that
 * follows finds the scope by the JSON-RPC id in its body and uses the scope's signal.
 */
export class RequestTracker {
  #current: RequestScope | null = null;
  readonly #byId = new Map<string | number, RequestScope>();

  /** Runs `start`, attaching `scope` to every request it sends before its first await. */
  within<T>(scope: RequestScope, start: () => Promise<T>): Promise<T> {
    this.#current = scope;
    const ids: (string | number)[] = [];
    let promise: Promise<T>;
    try {
      promise = start();
    } finally {
      this.#current = null;
      for (const [id, s] of this.#byId) if (s === scope) ids.push(id);
    }
    return promise.finally(() => {
      for (const id of ids) this.#byId.delete(id);
    });
  }

  /** Called by the transport for each message it sends. */
  claim(message: JSONRPCMessage): void {
    if (this.#current && "id" in message && "method" in message) this.#byId.set(message.id, this.#current);
  }

  /** The scope of the request whose JSON body this is, if any. */
  scopeFor(body: unknown): RequestScope | undefined {
    if (typeof body !== "string" || this.#byId.size === 0) return undefined;
    try {
      const msg = JSON.parse(body) as { id?: unknown; method?: unknown };
      return (typeof msg.id === "string" || typeof msg.id === "number") && typeof msg.method === "string" ? this.#byId.get(msg.id) : undefined;
    } catch {
      return undefined;
    }
  }
}

/** A response whose body errors once it passes `maxBytes`, failing `scope` too. */
export function capResponse(res: Response, maxBytes: number, scope: RequestScope | undefined): Response {
  if (!res.body) return res;
  let seen = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > maxBytes) {
        const err = new Error(`the server's answer is larger than ${maxBytes} bytes`);
        scope?.fail(err);
        controller.error(err);
        return;
      }
      controller.enqueue(chunk);
    },
  });
  return new Response(res.body.pipeThrough(counter), { status: res.status, statusText: res.statusText, headers: res.headers });
}
