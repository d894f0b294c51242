import type { PlatformEvent, Problem } from "./types.ts";

/**
 * A connection a platform holds open to deliver its messages (Discord's Gateway), as
 * neutral types: the adapter implements it over these ports, a Durable Object hosts it
 * (sockets, storage, timers, the intake), tests host it over fakes.
 */

/** An open socket, as the connection uses it. */
export interface ConnectionSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** What a socket reports back. */
export interface SocketHandlers {
  message(text: string): void;
  close(code: number, reason: string): void;
}

/** What the host gives a connection. */
export interface ConnectionPorts {
  now(): number;
  /** In [0, 1): jitter. */
  random(): number;
  fetch: typeof fetch;
  /** Opens a WebSocket client to `url` (ws: or wss:). Rejects when it cannot. */
  open(url: string, handlers: SocketHandlers): Promise<ConnectionSocket>;
  /** Small durable values (the session to resume, what a channel is). */
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  /** Takes a message in, as a webhook's would be (dedupe, allow list, session keys). */
  deliver(event: PlatformEvent): Promise<void>;
  /** Call `wake()` again at this time (epoch ms); null: nothing is due. One pending wake-up at a time. */
  wakeAt(at: number | null): void;
}

/** What `hermes-edge status`, `/v1/status` and the console show of a connection. Times in epoch ms. */
export interface ConnectionStatus {
  /** `connected`: the session is up; `connecting`: being (re)opened; `stopped`: a fatal close, see `problem`. */
  state: "connected" | "connecting" | "stopped";
  connected_since: number | null;
  last_ack_at: number | null;
  latency_ms: number | null;
  resumes: number;
  last_close_code: number | null;
  last_close_at: number | null;
  /** Why it stopped and what to do, while stopped. */
  problem: Problem | null;
}

export interface PlatformConnection {
  /** Does whatever is due (connect, heartbeat, reconnect); call it from alarms and `wakeAt`. Never throws. */
  wake(): Promise<void>;
  status(): Promise<ConnectionStatus>;
}

/** A bridged platform's state as the Relay object reports it (a platform a gateway bridges: the Signal adapter reads it for health and handoffs). */
export interface BridgeState {
  gatewayId: string;
  connected: boolean;
  /** What the gateway last said about its daemon (null: it never said). */
  reachable: boolean | null;
  detail: string | null;
  /** Actions stored and not yet confirmed by the gateway. */
  waiting: number;
}
