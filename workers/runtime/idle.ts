/**
 * The one wait-until-idle: callers wait for the owner's `isIdle()` to hold; the owner calls
 * `check()` after each change that may have made it idle (a turn ended, a drain finished),
 * which wakes them all. No timers, no polling.
 */
export class IdleWaiters {
  readonly #isIdle: () => boolean;
  #waiting: Array<() => void> = [];

  constructor(isIdle: () => boolean) {
    this.#isIdle = isIdle;
  }

  /** Whether the owner is idle now. */
  get idle(): boolean {
    return this.#isIdle();
  }

  /** Resolves at once when idle, else at the first `check()` that finds it idle. */
  wait(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Wakes every waiter when the owner is idle now; does nothing otherwise. */
  check(): void {
    if (!this.#isIdle()) return;
    for (const wake of this.#waiting.splice(0)) wake();
  }
}
