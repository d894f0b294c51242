import { backoffCeiling, backoffDelay, type BackoffPolicy } from "../../workers/retry/index.ts";

/** Reconnect timing: {@link Backoff} settings. */
export interface BackoffOptions {
  baseMs?: number;
  capMs?: number;
  /** A connection that stayed up this long resets the ladder. */
  stableMs?: number;
  /** In [0, 1), like Math.random. */
  random?: () => number;
}

/**
 * Jittered exponential backoff for re-dials: the ceiling starts at 1 s, doubles per failed
 * attempt and is capped at 30 s. Equal jitter: each wait is drawn from [ceiling / 2,
 * ceiling), so gateways that lost the connector together spread out, yet none re-dials at
 * once in a tight loop (full jitter could draw ~0 s). The ladder resets only after a
 * connection that stayed handshaked for `stableMs` (60 s), so a flapping connector is not
 * hammered at 1 s.
 */
export class Backoff {
  readonly #policy: BackoffPolicy;
  readonly #stableMs: number;
  readonly #random: () => number;
  #attempt = 0;
  #upSince: number | null = null;

  constructor(opts: BackoffOptions = {}) {
    this.#policy = { baseMs: opts.baseMs ?? 1_000, capMs: opts.capMs ?? 30_000, jitter: "equal" };
    this.#stableMs = opts.stableMs ?? 60_000;
    this.#random = opts.random ?? Math.random;
  }

  /** The ceiling of the next wait. */
  get ceilingMs(): number {
    return backoffCeiling(this.#attempt, this.#policy);
  }

  /** The wait before the next dial; each call climbs one rung. */
  next(): number {
    const wait = backoffDelay(this.#attempt, this.#policy, this.#random);
    this.#attempt++;
    return wait;
  }

  /** A connection completed its handshake at `now`. */
  up(now: number): void {
    this.#upSince = now;
  }

  /** The connection went down at `now`; it resets the ladder if it had been up long enough. */
  down(now: number): void {
    if (this.#upSince !== null && now - this.#upSince >= this.#stableMs) this.#attempt = 0;
    this.#upSince = null;
  }
}
