import { PlatformApiError } from "../types.ts";
import { homeserver, roomPath, type HomeserverSettings } from "./api.ts";

/** A member count is asked again after this long (a membership event in a transaction forgets it at once). */
export const ROOM_FACTS_TTL_MS = 10 * 60 * 1000;
const MAX_ROOMS = 2048;

/**
 * How many members each room has joined, as the homeserver says (`GET
 * /rooms/{roomId}/joined_members`, as the bot), kept per isolate: what tells a DM (the user
 * and the bot) from a group. Bounded; the oldest go first.
 */
export class RoomFacts {
  readonly #h: HomeserverSettings;
  readonly #now: () => number;
  readonly #joined = new Map<string, { count: number; at: number }>();

  constructor(h: HomeserverSettings, now: () => number) {
    this.#h = h;
    this.#now = now;
  }

  /** The joined member count, or null when not known (or too old). */
  known(roomId: string): number | null {
    const f = this.#joined.get(roomId);
    return f && this.#now() - f.at < ROOM_FACTS_TTL_MS ? f.count : null;
  }

  remember(roomId: string, count: number): void {
    this.#joined.delete(roomId);
    this.#joined.set(roomId, { count, at: this.#now() });
    const oldest = this.#joined.keys().next();
    if (this.#joined.size > MAX_ROOMS && !oldest.done) this.#joined.delete(oldest.value);
  }

  /**
   * Forgets the rooms whose membership changed, then asks for each room in `rooms` not known.
   * A room the bot may not look at (403, 404: not joined) stays unknown, so a group; a
   * homeserver that cannot answer rejects (the transaction is then sent again).
   */
  async learn(rooms: ReadonlySet<string>, changed: ReadonlySet<string>): Promise<void> {
    for (const r of changed) this.#joined.delete(r);
    for (const room of rooms) {
      if (this.known(room) !== null) continue;
      try {
        const r = await homeserver<{ joined?: unknown }>(this.#h, "GET", roomPath(room, "joined_members"), undefined, "joined members");
        const joined = r.joined;
        if (typeof joined === "object" && joined !== null) this.remember(room, Object.keys(joined).length);
      } catch (err) {
        if (err instanceof PlatformApiError && !err.retryable) continue;
        throw err;
      }
    }
  }
}
