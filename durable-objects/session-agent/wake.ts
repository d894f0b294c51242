/**
 * The session object's one alarm, shared by its watchdog, recovery, handoff pickup and D1
 * retries: each asks to be woken by some time, and the alarm rings at the earliest of them.
 */
export class WakeUp {
  readonly #storage: DurableObjectStorage;
  /** The alarm this instance knows is set (null: none, or not known). */
  #at: number | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Makes sure the alarm rings by `at` (never later than one already set). */
  async by(at: number): Promise<void> {
    if (this.#at !== null && this.#at <= at) return;
    const current = await this.#storage.getAlarm();
    if (current !== null && current <= at) {
      this.#at = current;
      return;
    }
    this.#at = at;
    await this.#storage.setAlarm(at);
  }

  /** The alarm rang: none is set until someone asks again. */
  rang(): void {
    this.#at = null;
  }
}
