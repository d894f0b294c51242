import type { Clock } from "../../workers/runtime/index.ts";

/** A clock that moves only when the test says so; timers fire in due order. */
export class ManualClock implements Clock {
  #now: number;
  #next = 1;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Delays of the timers still pending, from now, soonest first. */
  pending(): number[] {
    return [...this.#timers.values()].map((t) => t.at - this.#now).sort((a, b) => a - b);
  }

  /** Takes the next timer due by `until` off the list and moves time to it; false if none. */
  #fireNext(until: number): boolean {
    const due = [...this.#timers].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
    if (!due) return false;
    this.#timers.delete(due[0]);
    this.#now = due[1].at;
    due[1].fn();
    return true;
  }

  /** Moves time on by `ms`, firing each timer that falls due on the way. */
  advance(ms: number): void {
    const until = this.#now + ms;
    while (this.#fireNext(until));
    this.#now = until;
  }

  /**
   * Like `advance`, for code whose timers start async work: after each timer (and at the
   * end) pending promise callbacks get to run before time moves on.
   */
  async advanceSettling(ms: number): Promise<void> {
    const until = this.#now + ms;
    const settle = async () => {
      for (let i = 0; i < 20; i++) await Promise.resolve();
    };
    while (this.#fireNext(until)) await settle();
    this.#now = until;
    await settle();
  }
}
