import type { Writable } from "node:stream";
import type { Message, Session } from "./api-types.ts";
import { PipedInput, TtyInput, type ChatInput } from "./chat-input.ts";
import { ApiRefusal, CliError, type ApiClient } from "./client.ts";
import { askLine, println, type CliIo, type Style } from "./io.ts";
import { HANDOFF_USAGE, runHandoff } from "./handoff.ts";
import { replyView } from "./reply-view.ts";
import { formatSessionList, getSession, listSessions, minutesAgo, parkedSession, recap, resolveSession } from "./sessions.ts";
import { chatSpinner, type Spinner } from "./spinner.ts";

export interface ChatOptions {
  client: ApiClient;
  io: CliIo;
  style: Style;
  /** Wait for a turn already running in the session (default), or fail at once (`--no-wait`). */
  wait?: boolean;
}

interface RunningTurn {
  sessionId: string;
  local: AbortController;
  interrupting: boolean;
}

/** A command handler's verdict: keep chatting or leave. */
type Next = "continue" | "quit";

/** How long a message waits for a turn already running in its session, and the polling steps. */
export const BUSY_WAIT_MAX_MS = 10 * 60_000;
export const BUSY_POLL_FIRST_MS = 250;
export const BUSY_POLL_MAX_MS = 4000;

export const CHAT_HELP = [
  "Type a message and press Enter to talk to the agent. Ctrl-C stops a running reply",
  "and clears a half-typed line; Ctrl-C at an empty prompt, Ctrl-D or /quit leaves.",
  "Tab completes a /command.",
  "",
  "  /new                      start a fresh session with your next message",
  "  /sessions                 list recent sessions, numbered",
  "  /resume [n|id|title]      continue a session (no argument: list them)",
  "  /handoff <platform> [dm]  move this session to a platform's home channel (dm: your DM there)",
  "  /help                     this help",
  "  /quit, /exit              leave (the session stays; resume it later)",
];

/** The slash commands, for Tab. */
export const CHAT_COMMANDS = ["/new", "/sessions", "/resume", "/handoff", "/help", "/quit", "/exit"] as const;

/** The SSE `tool` event: a tool call starting or ending during a turn. */
interface ToolEvent {
  name: string;
  status: "start" | "end";
  summary?: string;
}

/** The interactive chat. Works on a terminal and with piped stdin. Returns the exit code. */
export class Chat {
  readonly #client: ApiClient;
  readonly #io: CliIo;
  readonly #style: Style;
  readonly #tty: boolean;
  readonly #wait: boolean;
  readonly #spinner: Spinner;
  #session: Session | null = null;
  #recent: Session[] = [];
  #turn: RunningTurn | null = null;
  #failed = false;
  #input: ChatInput | null = null;
  /** Set while a wait (a handoff, a busy session) runs, so Ctrl-C can stop it. */
  #waiting: AbortController | null = null;

  constructor(opts: ChatOptions) {
    this.#client = opts.client;
    this.#io = opts.io;
    this.#style = opts.style;
    this.#tty = Boolean(opts.io.stdin.isTTY && opts.io.stdout.isTTY);
    this.#wait = opts.wait ?? true;
    this.#spinner = chatSpinner(opts.io.stdout, opts.io.stderr, opts.io.timers, opts.style);
  }

  get session(): Session | null {
    return this.#session;
  }

  /** Chatter goes to the terminal; with pipes it goes to stderr so stdout is just replies. */
  get #chatter(): Writable {
    return this.#tty ? this.#io.stdout : this.#io.stderr;
  }

  #out(text = ""): void {
    println(this.#io.stdout, text);
  }

  #note(text: string): void {
    println(this.#chatter, this.#style.dim(text));
  }

  #error(text: string): void {
    this.#failed = true;
    println(this.#io.stderr, this.#style.red(`error: ${text}`));
  }

  async run(resume?: string): Promise<number> {
    // Before the first prompt: the URL is a hermes-edge Worker, and it takes the token.
    await this.#client.health();
    await this.#client.checkToken();
    if (resume) await this.#resume(resume);
    else if (this.#tty) {
      this.#note(`hermes-edge chat · ${this.#client.target.baseUrl} · /help for commands`);
      await this.#offerParked();
    }
    const input: ChatInput = this.#tty ? new TtyInput(this.#io, this.#style.bold("you › "), CHAT_COMMANDS) : new PipedInput(this.#io);
    this.#input = input;
    const onSigint = () => this.#onInterrupt();
    this.#io.signals.on("SIGINT", onSigint);
    try {
      for (let raw = await input.next(); raw !== null; raw = await input.next()) {
        const line = raw.trim();
        if (line === "") continue;
        input.busy(onSigint);
        let next: Next;
        try {
          next = await this.#handle(line).catch((err: unknown) => {
            if (err instanceof CliError) {
              this.#error(err.message);
              return "continue" as const;
            }
            throw err;
          });
        } finally {
          input.idle();
        }
        if (next === "quit") break;
      }
    } finally {
      this.#io.signals.off("SIGINT", onSigint);
      this.#spinner.stop();
      input.close();
      this.#input = null;
    }
    return this.#failed && !this.#tty ? 1 : 0;
  }

  /** A session a chat handed to the CLI (`/handoff cli`) and nobody continued yet: offered before the first prompt. */
  async #offerParked(): Promise<void> {
    const now = this.#io.now();
    const parked = parkedSession(await listSessions(this.#client, 50), now);
    if (!parked?.handoff?.finished_at) return;
    const from = parked.handoff.from ?? parked.source;
    const answer = await askLine(this.#io, `a session was handed to the CLI from ${from} ${minutesAgo(parked.handoff.finished_at, now)}: resume? [Y/n] `);
    if (answer === null || !/^n/i.test(answer)) await this.#resume(parked.id);
  }

  /** Ctrl-C: stop a wait, or the running reply (a second Ctrl-C drops the stream); otherwise leave. */
  #onInterrupt(): void {
    if (this.#waiting) {
      this.#waiting.abort();
      return;
    }
    const turn = this.#turn;
    if (!turn) {
      if (this.#tty) this.#out();
      this.#input?.close();
      return;
    }
    if (turn.interrupting) {
      turn.local.abort();
      return;
    }
    turn.interrupting = true;
    this.#client.json("POST", `/v1/sessions/${encodeURIComponent(turn.sessionId)}/interrupt`).catch(() => turn.local.abort());
  }

  async #handle(line: string): Promise<Next> {
    if (!line.startsWith("/")) {
      await this.#runTurn(line);
      return "continue";
    }
    const [cmd = "", ...rest] = line.split(/\s+/);
    const arg = rest.join(" ").trim();
    switch (cmd.toLowerCase()) {
      case "/quit":
      case "/exit":
        return "quit";
      case "/help":
        for (const l of CHAT_HELP) this.#out(l);
        return "continue";
      case "/new":
        this.#session = null;
        this.#note("your next message starts a new session");
        return "continue";
      case "/sessions":
        await this.#listRecent();
        return "continue";
      case "/resume":
        if (!arg) {
          await this.#listRecent();
          this.#note("resume one with /resume <number|id|title>");
        } else {
          await this.#resume(arg);
        }
        return "continue";
      case "/handoff":
        return this.#handoff(arg);
      default:
        this.#error(`unknown command ${cmd}; /help lists the commands`);
        return "continue";
    }
  }

  async #handoff(arg: string): Promise<Next> {
    if (!arg) {
      for (const l of HANDOFF_USAGE.split("\n")) this.#out(l);
      if (this.#session) this.#note(`(this session is ${this.#session.id}; it stays resumable either way)`);
      return "continue";
    }
    if (!this.#session) {
      this.#error("nothing to hand off yet: send a message first, or /resume a session");
      return "continue";
    }
    // `/handoff whatsapp dm`: your own DM there (the account linked with hermes-edge link).
    const [platform = "", where = "", ...extra] = arg.toLowerCase().split(/\s+/);
    if (extra.length > 0 || (where !== "" && where !== "dm")) {
      this.#error(`unexpected '${arg.slice(platform.length).trim()}': /handoff <platform> [dm]`);
      return "continue";
    }
    const session = (await getSession(this.#client, this.#session.id)) ?? this.#session;
    this.#waiting = new AbortController();
    try {
      const { outcome } = await runHandoff({
        client: this.#client,
        io: this.#io,
        style: this.#style,
        session,
        platform,
        ...(where === "dm" ? { person: "operator" } : {}),
        thread: true,
        wait: true,
        progress: this.#chatter,
        signal: this.#waiting.signal,
      });
      return outcome === "completed" ? "quit" : "continue";
    } finally {
      this.#waiting = null;
    }
  }

  async #listRecent(): Promise<void> {
    this.#recent = await listSessions(this.#client, 10);
    for (const l of formatSessionList(this.#recent, this.#io.now(), this.#style, this.#session?.id)) this.#out(l);
  }

  async #resume(ref: string): Promise<void> {
    const s = await resolveSession(this.#client, ref, this.#recent);
    this.#session = s;
    this.#note(`resumed ${s.id}${s.title ? ` '${s.title}'` : ""} (${s.message_count} messages)`);
    const { messages } = await this.#client.json<{ messages: Message[] }>("GET", `/v1/sessions/${encodeURIComponent(s.id)}/messages`);
    const lines = recap(messages, this.#style, { columns: this.#tty ? this.#io.stdout.columns : undefined });
    if (lines.length > 0) {
      this.#note("last exchanges:");
      for (const l of lines) println(this.#chatter, l);
    }
  }

  async #ensureSession(): Promise<Session> {
    if (this.#session) return this.#session;
    const { session } = await this.#client.json<{ session: Session }>("POST", "/v1/sessions", {});
    this.#session = session;
    this.#note(`new session ${session.id}`);
    return session;
  }

  /** Sends a message; a session busy with another turn is waited for (unless --no-wait). */
  async #runTurn(content: string): Promise<void> {
    const session = await this.#ensureSession();
    while ((await this.#streamTurn(session.id, content)) === "busy") {
      if (!this.#wait) return this.#error("agent is busy: a turn is already running in this session (--no-wait)");
      const waited = await this.#waitUntilIdle(session.id);
      if (waited === "idle") continue;
      if (waited === "stopped" && this.#tty) this.#input?.prefill(content);
      return this.#error(
        waited === "stopped"
          ? "stopped waiting; the message was not sent"
          : `the session was still busy after ${BUSY_WAIT_MAX_MS / 60_000} minutes; the message was not sent`,
      );
    }
  }

  /** Polls the session until its turn is over, backing off; Ctrl-C stops waiting. */
  async #waitUntilIdle(sessionId: string): Promise<"idle" | "stopped" | "timeout"> {
    this.#note("the session is busy with another turn; waiting for it to finish (Ctrl-C stops waiting)…");
    const ctrl = new AbortController();
    this.#waiting = ctrl;
    this.#spinner.start("waiting for the running turn…");
    const deadline = this.#io.now() + BUSY_WAIT_MAX_MS;
    try {
      for (let delay = BUSY_POLL_FIRST_MS; ; delay = Math.min(delay * 2, BUSY_POLL_MAX_MS)) {
        if (!(await this.#sleep(Math.min(delay, Math.max(0, deadline - this.#io.now())), ctrl.signal))) return "stopped";
        const s = await getSession(this.#client, sessionId);
        if (!s?.running) return "idle";
        if (this.#io.now() >= deadline) return "timeout";
      }
    } finally {
      this.#spinner.stop();
      this.#waiting = null;
    }
  }

  /** Resolves true after `ms`, false at once when `signal` aborts. */
  #sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    const { timers } = this.#io;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const onAbort = () => {
        timers.clearTimeout(handle);
        resolve(false);
      };
      const handle = timers.setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** One turn's stream, printed as it comes; "busy" when the session had a turn running. */
  async #streamTurn(sessionId: string, content: string): Promise<"done" | "busy"> {
    const turn: RunningTurn = { sessionId, local: new AbortController(), interrupting: false };
    this.#turn = turn;
    const view = replyView({ out: this.#io.stdout, style: this.#style, spinner: this.#spinner, label: this.#tty ? "agent › " : null });
    let finish: string | null = null;
    let failure: string | null = null;
    this.#spinner.start("thinking…");
    try {
      for await (const ev of this.#client.turn(sessionId, content, turn.local.signal)) {
        if (ev.event === "delta") {
          view.text((ev.data as { text: string }).text);
        } else if (ev.event === "tool") {
          const tool = ev.data as ToolEvent;
          if (tool.status !== "start") continue;
          // On a terminal the line sits between the reply's lines; piped, it goes to stderr.
          view.flush();
          this.#spinner.stop();
          if (this.#tty) view.breakLine();
          this.#note(`  ⚙ ${tool.name}${tool.summary ? ` ${tool.summary.replace(/\s+/g, " ").slice(0, 160)}` : ""}`);
          this.#spinner.start(`${tool.name}…`);
        } else if (ev.event === "done") {
          finish = (ev.data as { finish_reason: string }).finish_reason;
        } else if (ev.event === "error") {
          failure = (ev.data as { message: string }).message;
        }
        // Other events are newer than this CLI: ignored.
      }
    } catch (err) {
      if (turn.local.signal.aborted) finish = "interrupted";
      else if (err instanceof ApiRefusal && err.code === "turn_in_progress" && !view.wrote) return "busy";
      else if (err instanceof CliError) failure = err.message;
      else throw err;
    } finally {
      this.#spinner.stop();
      this.#turn = null;
    }
    view.flush();
    view.breakLine();
    if (finish === "interrupted") this.#note("[interrupted]");
    else if (finish === null && failure === null) failure = "the reply stream ended early";
    if (failure) this.#error(failure);
    return "done";
  }
}
