/** One queued unit of work for a session; `signal` aborts when the session is interrupted. */
export type SessionJob = (signal: AbortSignal) => Promise<void>;

/** How a queued job ended: it ran (successfully or not), or it was dropped unstarted. */
export type JobEnd = "ran" | "dropped";

interface Waiting {
  job: SessionJob;
  done: (end: JobEnd) => void;
}

interface Lane {
  running: AbortController | null;
  waiting: Waiting[];
}

/**
 * Runs jobs one at a time per session key, in arrival order; different keys run
 * concurrently. An interrupt aborts only the running job of its key, never queued ones.
 */
export class SessionQueue {
  readonly #lanes = new Map<string, Lane>();
  readonly #active = new Set<Promise<void>>();
  readonly #onError: (key: string, err: unknown) => void;

  constructor(onError: (key: string, err: unknown) => void) {
    this.#onError = onError;
  }

  /** Queues `job` behind the jobs of `key`; resolves once it ran or was dropped. */
  enqueue(key: string, job: SessionJob): Promise<JobEnd> {
    return new Promise((done) => {
      let lane = this.#lanes.get(key);
      if (!lane) this.#lanes.set(key, (lane = { running: null, waiting: [] }));
      lane.waiting.push({ job, done });
      if (!lane.running) this.#track(this.#pump(key, lane));
    });
  }

  /** Aborts the running job of `key`; false when nothing runs for it. */
  interrupt(key: string, reason = "interrupted"): boolean {
    const running = this.#lanes.get(key)?.running;
    if (!running) return false;
    running.abort(new Error(reason));
    return true;
  }

  /** Keys with a running job. */
  runningKeys(): string[] {
    return [...this.#lanes].filter(([, lane]) => lane.running !== null).map(([key]) => key);
  }

  /** Drops every job that has not started; returns how many. */
  dropQueued(): number {
    let n = 0;
    for (const lane of this.#lanes.values()) {
      for (const w of lane.waiting.splice(0)) {
        w.done("dropped");
        n++;
      }
    }
    return n;
  }

  /** Resolves when no job is running. */
  async idle(): Promise<void> {
    while (this.#active.size > 0) await Promise.all(this.#active);
  }

  #track(p: Promise<void>): void {
    this.#active.add(p);
    void p.finally(() => this.#active.delete(p));
  }

  async #pump(key: string, lane: Lane): Promise<void> {
    for (let next = lane.waiting.shift(); next; next = lane.waiting.shift()) {
      const controller = new AbortController();
      lane.running = controller;
      try {
        await next.job(controller.signal);
      } catch (err) {
        this.#onError(key, err);
      }
      lane.running = null;
      next.done("ran");
    }
    this.#lanes.delete(key);
  }
}
