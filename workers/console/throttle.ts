/**
 * Failed console sign-ins, slowed per client. Every attempt counts as a failure the moment
 * it starts (so parallel guesses cannot all slip through the free ones) and a success
 * clears the count. After FREE_ATTEMPTS failures each further attempt must wait, doubling
 * from BASE_DELAY_MS up to MAX_DELAY_MS; a client quiet for FORGET_AFTER_MS starts afresh.
 * Pure, so the schedule is tested with a clock in hand; the SignInGuard object applies it.
 */
import { backoffDelay } from "../retry/index.ts";

/** Failures allowed without waiting (typos). */
export const FREE_ATTEMPTS = 3;
export const BASE_DELAY_MS = 1_000;
export const MAX_DELAY_MS = 15 * 60_000;
export const FORGET_AFTER_MS = 24 * 60 * 60_000;

/** What one client has done lately. */
export interface ThrottleState {
  failures: number;
  lastAt: number;
  /** No attempt is taken before this time (epoch ms). */
  blockedUntil: number;
}

export type AttemptResult = { ok: true; state: ThrottleState } | { ok: false; retryAfterMs: number };

/** The wait imposed after `failures` failures. */
export function delayAfter(failures: number): number {
  if (failures <= FREE_ATTEMPTS) return 0;
  // No jitter: the wait is a rule the client is told (Retry-After), not a retry of ours.
  return backoffDelay(failures - FREE_ATTEMPTS - 1, { baseMs: BASE_DELAY_MS, capMs: MAX_DELAY_MS, jitter: "none" });
}

/** An attempt at `now`: refused while the client must wait, else taken and counted. */
export function attempt(state: ThrottleState | null, now: number): AttemptResult {
  const fresh = !state || now - state.lastAt >= FORGET_AFTER_MS;
  if (!fresh && now < state.blockedUntil) return { ok: false, retryAfterMs: state.blockedUntil - now };
  const failures = (fresh ? 0 : state.failures) + 1;
  return { ok: true, state: { failures, lastAt: now, blockedUntil: now + delayAfter(failures) } };
}

/**
 * The key a client is counted under: its IPv4 address, or the /64 of an IPv6 address
 * (one customer usually holds a whole /64, so its single addresses would be free to rotate).
 */
export function clientKey(ip: string | null): string {
  const a = (ip ?? "").trim().toLowerCase();
  if (!a) return "unknown";
  if (!a.includes(":")) return a;
  const [head = "", tail = ""] = a.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = a.includes("::") ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/** How long an isolate trusts the guard's last word that a client is clear (no failures counted). */
export const CLEAR_TRUST_MS = 60_000;
/** Clients remembered per isolate at most (the oldest are forgotten first). */
const CLEAR_KEPT = 1_000;

/**
 * The clients whose right token the guard accepted lately, with no wrong one from them seen
 * here since: a right token from one of them within {@link CLEAR_TRUST_MS} is let through
 * without asking the guard again, so the API's success path pays no object round trip.
 * Only the guard's own "ok" for the right token puts a client here, so a client that never
 * had the token (someone guessing) is judged by the guard every time, the right guess
 * included; a wrong token seen here takes the client out. Isolate memory, not shared: a
 * lockout started from another isolate applies here once the trust expires (at most a minute).
 */
export class RecentlyCleared {
  readonly #until = new Map<string, number>();

  /** True when `client`'s right token may skip the guard at `now`. */
  trusted(client: string, now: number): boolean {
    const until = this.#until.get(client);
    if (until === undefined) return false;
    if (now < until) return true;
    this.#until.delete(client);
    return false;
  }

  /** The guard accepted `client`'s right token at `now`. */
  cleared(client: string, now: number): void {
    this.#until.delete(client); // re-inserted last: the map's order is the forgetting order
    this.#until.set(client, now + CLEAR_TRUST_MS);
    for (const oldest of this.#until.keys()) {
      if (this.#until.size <= CLEAR_KEPT) break;
      this.#until.delete(oldest);
    }
  }

  /** A wrong token from `client`: the guard judges its next request again. */
  failed(client: string): void {
    this.#until.delete(client);
  }
}
