import type { BridgeResult } from "../../../workers/relay/bridge.ts";
import type { Clock } from "../../../workers/runtime/index.ts";
import { errorMessage } from "../../../workers/log/index.ts";
import { Backoff } from "../backoff.ts";

/** Longest one JSON-RPC call to signal-cli may take (a send to a big group is slow, a hung daemon is not). */
export const RPC_TIMEOUT_MS = 30_000;

/** What signal-cli's HTTP daemon is reached with (`signal-cli -a <account> daemon --http <host:port>`). */
export interface SignalCliOptions {
  /** `SIGNAL_CLI_URL`, no trailing slash. */
  url: string;
  account: string;
  fetch: typeof fetch;
  clock: Clock;
  random?: () => number;
  log: (line: string) => void;
}

/** A JSON-RPC answer: its result, or an error as the bridge reports it. */
export type RpcOutcome = { ok: true; result: unknown } | { ok: false; result: BridgeResult };

const failure = (code: string, error: string, retryAfter?: number): RpcOutcome => ({
  ok: false,
  result: { success: false, code, error: error.slice(0, 2000), ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}) },
});

/** A send's per-recipient results (`results[].type`, sc `JsonSendMessageResult.java`): all failed is a failure. */
function sendFailure(result: unknown): RpcOutcome | null {
  const results = (result as { results?: Array<{ type?: unknown; retryAfterSeconds?: unknown }> } | null)?.results;
  if (!Array.isArray(results) || results.length === 0 || results.some((r) => r.type === "SUCCESS")) return null;
  const limited = results.find((r) => r.type === "RATE_LIMIT_FAILURE");
  if (limited) return failure("rate_limited", "Signal rate limit", typeof limited.retryAfterSeconds === "number" ? limited.retryAfterSeconds : undefined);
  return failure("rejected", `not delivered: ${results.map((r) => String(r.type)).join(", ")}`);
}

/**
 * signal-cli's HTTP daemon (PLATFORM-NOTES "Signal"): JSON-RPC at `POST /api/v1/rpc`, events
 * as server-sent events at `GET /api/v1/events`, liveness at `GET /api/v1/check`.
 */
export class SignalCli {
  readonly #o: SignalCliOptions;
  #nextId = 1;

  constructor(opts: SignalCliOptions) {
    this.#o = opts;
  }

  get account(): string {
    return this.#o.account;
  }

  /** One call for this account. A refused call is a result with a code (`rate_limited`, `network`, `rejected`, …), never a throw. */
  async rpc(method: string, params: Record<string, unknown>): Promise<RpcOutcome> {
    let res: Response;
    try {
      res = await this.#o.fetch(`${this.#o.url}/api/v1/rpc`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", method, params: { ...params, account: this.#o.account }, id: this.#nextId++ }),
        signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
      });
    } catch (err) {
      return failure("network", `signal-cli at ${this.#o.url} did not answer: ${errorMessage(err)}`);
    }
    if (!res.ok) return failure(res.status >= 500 ? "unavailable" : "rejected", `signal-cli answered HTTP ${res.status}`);
    let body: { result?: unknown; error?: { code?: unknown; message?: unknown } };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      return failure("unavailable", "signal-cli answered something that is not JSON");
    }
    if (body.error) {
      const message = typeof body.error.message === "string" ? body.error.message : "an error";
      if (/RateLimit/i.test(message)) return failure("rate_limited", message);
      return failure(/Unregistered|NotFound|Unknown group/i.test(message) ? "not_found" : "rejected", `signal-cli ${method}: ${message}`);
    }
    return (method === "send" ? sendFailure(body.result) : null) ?? { ok: true, result: body.result };
  }

  /** Whether the daemon answers `GET /api/v1/check`, and why not. */
  async check(): Promise<{ reachable: boolean; detail?: string }> {
    try {
      const res = await this.#o.fetch(`${this.#o.url}/api/v1/check`, { signal: AbortSignal.timeout(10_000) });
      await res.body?.cancel();
      return res.ok ? { reachable: true } : { reachable: false, detail: `HTTP ${res.status} from ${this.#o.url}/api/v1/check` };
    } catch (err) {
      return { reachable: false, detail: `${this.#o.url}: ${errorMessage(err)}` };
    }
  }

  /**
   * Follows the event stream until `signal` aborts: each `receive` event's data goes to
   * `onEvent`. The stream has no ids to resume from: after a drop it is opened again with
   * jittered backoff (1 s doubling to 30 s, reset after a minute up), and `onState` says
   * when it is up or down. Messages that arrived meanwhile wait in signal-cli (see
   * docs/platforms/signal.md).
   */
  async follow(onEvent: (data: string) => void, onState: (up: boolean, why?: string) => void, signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.#o.random ? { random: this.#o.random } : {});
    const url = `${this.#o.url}/api/v1/events?account=${encodeURIComponent(this.#o.account)}`;
    while (!signal.aborted) {
      let why = "the stream ended";
      try {
        const res = await this.#o.fetch(url, { headers: { accept: "text/event-stream" }, signal });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status} from ${url}`);
        backoff.up(this.#o.clock.now());
        onState(true);
        await readEvents(res.body, onEvent);
      } catch (err) {
        if (signal.aborted) break;
        why = errorMessage(err);
      }
      backoff.down(this.#o.clock.now());
      if (signal.aborted) break;
      const wait = backoff.next();
      onState(false, why);
      this.#o.log(`signal-cli: event stream down (${why}); reconnecting in ${Math.round(wait / 100) / 10}s`);
      await new Promise<void>((resolve) => {
        const t = this.#o.clock.setTimeout(resolve, wait);
        signal.addEventListener("abort", () => (this.#o.clock.clearTimeout(t), resolve()), { once: true });
      });
    }
  }
}

/** Reads server-sent events (`event:` / `data:` lines, a blank line ends one; `:` lines are keep-alives). */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (data: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let event = "message";
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl).replace(/\r$/, "");
      buffered = buffered.slice(nl + 1);
      nl = buffered.indexOf("\n");
      if (line === "") {
        if (data.length > 0 && event === "receive") onEvent(data.join("\n"));
        event = "message";
        data = [];
      } else if (line.startsWith(":")) continue;
      else {
        const at = line.indexOf(":");
        const field = at < 0 ? line : line.slice(0, at);
        const v = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
        if (field === "event") event = v;
        else if (field === "data") data.push(v);
      }
    }
  }
}
