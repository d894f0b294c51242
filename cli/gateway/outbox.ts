import { randomUUID } from "node:crypto";
import type { Clock } from "../../workers/runtime/index.ts";
import type { GatewayFrameIn, OutboundActionIn, OutboundResult } from "../../workers/relay/frames.ts";

type OutboundAction = OutboundActionIn;

/** How long an outbound waits for its `outbound_result` before it counts as ambiguous. */
export const OUTBOUND_TIMEOUT_MS = 30_000;

/** The connection as the outbox needs it. */
export interface OutboxLink {
  readonly connected: boolean;
  send(frame: GatewayFrameIn): boolean;
  whenConnected(): Promise<boolean>;
}

interface Pending {
  action: OutboundAction;
  timer: unknown;
  resolve: (result: OutboundResult) => void;
}

/**
 * Outbound actions and their results, matched by `requestId`. A result that never comes
 * (timeout, or the socket closed first) is ambiguous: the action may have run, so it is
 * logged and reported as a failure, never re-sent.
 */
export class Outbox {
  readonly #link: OutboxLink;
  readonly #clock: Clock;
  readonly #log: (line: string) => void;
  readonly #pending = new Map<string, Pending>();
  #stopped = false;

  constructor(link: OutboxLink, clock: Clock, log: (line: string) => void) {
    this.#link = link;
    this.#clock = clock;
    this.#log = log;
  }

  /** Runs `action`, waiting for a connection first if there is none; resolves with its result. */
  async request(platform: string, action: OutboundAction): Promise<OutboundResult> {
    for (;;) {
      if (this.#stopped) return { success: false, code: "stopped", error: "the gateway is stopping" };
      if (!this.#link.connected && !(await this.#link.whenConnected())) return { success: false, code: "stopped", error: "the relay connection ended" };
      const requestId = randomUUID();
      const result = new Promise<OutboundResult>((resolve) => {
        const timer = this.#clock.setTimeout(
          () => this.#ambiguous(requestId, `no outbound_result within ${OUTBOUND_TIMEOUT_MS / 1000}s`, "timeout"),
          OUTBOUND_TIMEOUT_MS,
        );
        this.#pending.set(requestId, { action, timer, resolve });
      });
      if (this.#link.send({ type: "outbound", requestId, action, platform })) return result;
      // Nothing went out (the socket dropped in between): safe to try again.
      this.#clock.clearTimeout(this.#pending.get(requestId)?.timer);
      this.#pending.delete(requestId);
    }
  }

  /** Sends `action` without waiting for its result (typing); skipped while disconnected. */
  notify(platform: string, action: OutboundAction): void {
    if (!this.#stopped) this.#link.send({ type: "outbound", requestId: randomUUID(), action, platform });
  }

  /** An `outbound_result` frame; results of unknown (or fire-and-forget) requests are ignored. */
  result(frame: { requestId: string; result: OutboundResult }): void {
    const p = this.#pending.get(frame.requestId);
    if (!p) return;
    this.#pending.delete(frame.requestId);
    this.#clock.clearTimeout(p.timer);
    p.resolve(frame.result);
  }

  /** The socket closed: results pending on it will not arrive. */
  disconnected(): void {
    for (const id of [...this.#pending.keys()]) this.#ambiguous(id, "the connection closed before its outbound_result", "disconnected");
  }

  /** Fails everything pending and refuses new requests. */
  stop(): void {
    this.#stopped = true;
    for (const id of [...this.#pending.keys()]) this.#ambiguous(id, "the gateway stopped before its outbound_result", "stopped");
  }

  #ambiguous(requestId: string, why: string, code: string): void {
    const p = this.#pending.get(requestId);
    if (!p) return;
    this.#pending.delete(requestId);
    this.#clock.clearTimeout(p.timer);
    this.#log(`outbound ${p.action.op} to chat ${p.action.chat_id}: ${why}; it may or may not have run`);
    p.resolve({ success: false, code, error: why });
  }
}
