/**
 * The session object's one alarm, shared by its watchdog, recovery, handoff pickup and D1
 * retries: each asks to be woken by some time, and the alarm rings at the earliest of them.
 */
export class WakeUp {
  readonly #storage: DurableObjectStorage;
  /** The alarm this instance knows is set (null: none, or not known). */
  #at: number | null = null;
  /** Bumped by {@link clear}: a `by` that was reading the alarm meanwhile reads it again. */
  #cleared = 0;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Makes sure the alarm rings by `at` (never later than one already set). */
  async by(at: number): Promise<void> {
    for (;;) {
      if (this.#at !== null && this.#at <= at) return;
      const cleared = this.#cleared;
      const current = await this.#storage.getAlarm();
      if (cleared !== this.#cleared) continue;
      if (current !== null && current <= at) {
        this.#at = current;
        return;
      }
      this.#at = at;
      await this.#storage.setAlarm(at);
      return;
    }
  }

  /**
   * Nothing is left to wake for: the alarm goes (a watchdog set for a turn that ended would
   * only wake the object to find nothing). Storage runs the delete before anything asked later.
   */
  clear(): Promise<void> {
    this.#at = null;
    this.#cleared++;
    return this.#storage.deleteAlarm();
  }

  /** The alarm rang: none is set until someone asks again. */
  rang(): void {
    this.#at = null;
  }
}
