/**
 * What every chaos scenario shares: bounded waits, the per-scenario counters, the cleanup
 * of every process the bench started (on exit, on an error, on SIGINT/SIGTERM), and a
 * client of the Worker's API that counts every 5xx it sees.
 */

/** The counts the bench reports; all must be zero. */
export interface Counts {
  /** A message never answered (within its bounded wait). */
  lost: number;
  /** A message answered twice, or a reply posted twice. */
  doubled: number;
  /** The reply the user sees differs from the transcript's (or is not the model's full answer). */
  truncated: number;
  /** Responses of 500 or more from the Worker (and requests it dropped). */
  fiveXx: number;
  /** A user reached another's session, or a replayed token was accepted. */
  breached: number;
}

export type Counter = keyof Counts;

/** One scenario's counters, with a line per count that says what happened (for the report). */
export class Tally {
  readonly counts: Counts = { lost: 0, doubled: 0, truncated: 0, fiveXx: 0, breached: 0 };
  readonly notes: string[] = [];
  /** What the scenario did, counted or not (printed under the table). */
  readonly info: string[] = [];
  /** What the scenario exercised (messages, bodies, replays), for the table. */
  cases = 0;

  readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  add(counter: Counter, note: string): void {
    this.counts[counter]++;
    if (this.notes.length < 20) this.notes.push(`${counter}: ${note}`);
  }

  get clean(): boolean {
    return Object.values(this.counts).every((n) => n === 0);
  }
}

/** A wait that ran out: the scenario records what it was waiting for. */
export class Timeout extends Error {
  override readonly name = "Timeout";
}

/** `promise`, or a {@link Timeout} after `ms`. Every wait of the bench goes through this. */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Timeout(`${what}: nothing after ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it returns a value (not undefined), at most `ms`. */
export async function until<T>(ms: number, what: string, check: () => Promise<T | undefined> | T | undefined, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Timeout(`${what}: nothing after ${ms / 1000} s`);
    await pause(everyMs);
  }
}

/** A pause between polls (never what a result depends on: every condition is checked). */
export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Cleanup = () => void;
const cleanups = new Set<Cleanup>();
let installed = false;

function runCleanups(): void {
  for (const c of [...cleanups].reverse()) {
    try {
      c();
    } catch {
      // the rest still run
    }
  }
  cleanups.clear();
}

/**
 * Registers a synchronous cleanup (kill a process group, remove a directory) run on exit,
 * on an uncaught error and on SIGINT/SIGTERM; returns its removal for an orderly stop.
 */
export function onCleanup(c: Cleanup): () => void {
  if (!installed) {
    installed = true;
    process.once("exit", runCleanups);
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      process.once(sig, () => {
        console.error(`\nchaos: ${sig}, stopping everything it started`);
        runCleanups();
        process.exit(sig === "SIGINT" ? 130 : 143);
      });
    }
    process.on("uncaughtException", (err) => {
      console.error("chaos: uncaught", err);
      runCleanups();
      process.exit(2);
    });
  }
  cleanups.add(c);
  return () => cleanups.delete(c);
}

/** The Worker's API (bearer token), counting 5xx into whichever tally is current. */
export class WorkerClient {
  tally: Tally | null = null;
  readonly url: string;
  readonly token: string;

  constructor(url: string, token: string) {
    this.url = url;
    this.token = token;
  }

  /** A request to the Worker; a 5xx (or a dropped connection) is counted. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, { ...init, signal: init.signal ?? AbortSignal.timeout(30_000) });
    } catch (err) {
      this.tally?.add("fiveXx", `${init.method ?? "GET"} ${path.slice(0, 60)}: no answer (${err instanceof Error ? err.message : String(err)})`);
      throw err;
    }
    if (res.status >= 500) this.tally?.add("fiveXx", `${init.method ?? "GET"} ${path.slice(0, 60)}: ${res.status}`);
    return res;
  }

  async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.fetch(path, {
      ...init,
      headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json", ...(init.headers ?? {}) },
    });
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    return (await res.json()) as T;
  }

  /** Posts a signed webhook body (or sends it as `to` says: a Matrix transaction is a PUT below the webhook URL); returns the status. */
  async webhook(platform: string, body: string, headers: Record<string, string>, to?: { method: string; path: string }): Promise<number> {
    const res = await this.fetch(to?.path ?? `/webhooks/${platform}`, { method: to?.method ?? "POST", headers, body });
    await res.arrayBuffer();
    return res.status;
  }
}

/** A session as the API lists it (the fields the bench reads). */
export interface ListedSession {
  id: string;
  source: string;
  session_key: string | null;
  chat_id: string | null;
  user_id: string | null;
  title: string | null;
}

/** A transcript message as the API shows it (the fields the bench reads). */
export interface ListedMessage {
  role: string;
  content: string | null;
  finish_reason: string | null;
}

/** The first session D1 lists that matches (the copy is written behind: polled, bounded). */
export function sessionWhere(api: WorkerClient, what: string, pred: (s: ListedSession) => boolean, ms = 30_000): Promise<ListedSession> {
  return until(ms, what, async () => (await api.json<{ sessions: ListedSession[] }>("/v1/sessions?limit=200")).sessions.find(pred), 250);
}

export async function transcript(api: WorkerClient, sessionId: string): Promise<ListedMessage[]> {
  return (await api.json<{ messages: ListedMessage[] }>(`/v1/sessions/${sessionId}/messages`)).messages;
}

/** What a transcript says about one user message: how often it is stored, and its last reply. */
export function answerOf(messages: readonly ListedMessage[], userText: string): { stored: number; replies: ListedMessage[] } {
  let stored = 0;
  const replies: ListedMessage[] = [];
  let inside = false;
  for (const m of messages) {
    if (m.role === "user") {
      inside = m.content === userText;
      if (inside) stored++;
    } else if (inside && m.role === "assistant" && m.content) replies.push(m);
  }
  return { stored, replies };
}
