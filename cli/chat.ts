import readline from "node:readline";
import type { Message, Session } from "./api-types.ts";
import { ApiRefusal, CliError, type ApiClient } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";
import { HANDOFF_USAGE, runHandoff } from "./handoff.ts";
import { formatSessionList, getSession, listSessions, recap, resolveSession } from "./sessions.ts";

export interface ChatOptions {
  client: ApiClient;
  io: CliIo;
  style: Style;
  /** `--resume`: id, title or `latest`. */
  resume?: string | undefined;
}

interface RunningTurn {
  sessionId: string;
  local: AbortController;
  interrupting: boolean;
}

/** A command handler's verdict: keep chatting or leave. */
type Next = "continue" | "quit";

export const CHAT_HELP = [
  "Type a message and press Enter to talk to the agent. Ctrl-C stops a running reply;",
  "Ctrl-C at the prompt (or /quit) leaves.",
  "",
  "  /new                      start a fresh session with your next message",
  "  /sessions                 list recent sessions, numbered",
  "  /resume [n|id|title]      continue a session (no argument: list them)",
  "  /handoff <platform>       move this session to telegram, discord or slack",
  "  /help                     this help",
  "  /quit, /exit              leave (the session stays; resume it later)",
];

/** The interactive chat. Works on a terminal and with piped stdin. Returns the exit code. */
export class Chat {
  readonly #client: ApiClient;
  readonly #io: CliIo;
  readonly #style: Style;
  readonly #tty: boolean;
  #session: Session | null = null;
  #recent: Session[] = [];
  #turn: RunningTurn | null = null;
  #failed = false;
  #rl: readline.Interface | null = null;
  /** Set while /handoff waits, so Ctrl-C can stop the wait. */
  #handoffWait: AbortController | null = null;

  constructor(opts: ChatOptions) {
    this.#client = opts.client;
    this.#io = opts.io;
    this.#style = opts.style;
    this.#tty = Boolean(opts.io.stdin.isTTY && opts.io.stdout.isTTY);
  }

  get session(): Session | null {
    return this.#session;
  }

  #out(text = ""): void {
    println(this.#io.stdout, text);
  }

  #note(text: string): void {
    // Chatter goes to the terminal; with pipes it goes to stderr so stdout is just replies.
    println(this.#tty ? this.#io.stdout : this.#io.stderr, this.#style.dim(text));
  }

  #error(text: string): void {
    this.#failed = true;
    println(this.#io.stderr, this.#style.red(`error: ${text}`));
  }

  async run(resume?: string): Promise<number> {
    if (resume) await this.#resume(resume);
    else if (this.#tty) this.#note(`hermes-edge chat · ${this.#client.target.baseUrl} · /help for commands`);
    const rl = readline.createInterface({
      input: this.#io.stdin,
      ...(this.#tty ? { output: this.#io.stdout } : {}),
      terminal: this.#tty,
      prompt: this.#style.bold("you › "),
    });
    this.#rl = rl;
    const onSigint = () => this.#onInterrupt();
    rl.on("SIGINT", onSigint);
    this.#io.signals.on("SIGINT", onSigint);
    try {
      if (this.#tty) rl.prompt();
      for await (const raw of rl) {
        const line = raw.trim();
        if (line !== "") {
          const next = await this.#handle(line).catch((err: unknown) => {
            if (err instanceof CliError) {
              this.#error(err.message);
              return "continue" as const;
            }
            throw err;
          });
          if (next === "quit") break;
        }
        if (this.#tty) rl.prompt();
      }
    } finally {
      this.#io.signals.off("SIGINT", onSigint);
      rl.close();
      this.#rl = null;
    }
    return this.#failed && !this.#tty ? 1 : 0;
  }

  /** Ctrl-C: stop the running reply; at the prompt, leave. A second Ctrl-C stops waiting. */
  #onInterrupt(): void {
    if (this.#handoffWait) {
      this.#handoffWait.abort();
      return;
    }
    const turn = this.#turn;
    if (!turn) {
      if (this.#tty) this.#out();
      this.#rl?.close();
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
    const session = (await getSession(this.#client, this.#session.id)) ?? this.#session;
    this.#handoffWait = new AbortController();
    try {
      const { outcome } = await runHandoff({
        client: this.#client,
        io: this.#io,
        style: this.#style,
        session,
        platform: arg.toLowerCase(),
        thread: true,
        wait: true,
        progress: this.#tty ? this.#io.stdout : this.#io.stderr,
        signal: this.#handoffWait.signal,
      });
      return outcome === "completed" ? "quit" : "continue";
    } finally {
      this.#handoffWait = null;
    }
  }

  async #listRecent(): Promise<void> {
    this.#recent = await listSessions(this.#client, 10);
    for (const l of formatSessionList(this.#recent, this.#io.now(), this.#style)) this.#out(l);
  }

  async #resume(ref: string): Promise<void> {
    const s = await resolveSession(this.#client, ref, this.#recent);
    this.#session = s;
    this.#note(`resumed ${s.id}${s.title ? ` '${s.title}'` : ""} (${s.message_count} messages)`);
    const { messages } = await this.#client.json<{ messages: Message[] }>("GET", `/v1/sessions/${encodeURIComponent(s.id)}/messages`);
    const lines = recap(messages, this.#style);
    if (lines.length > 0) {
      this.#note("last exchanges:");
      for (const l of lines) this.#out(l);
    }
  }

  async #ensureSession(): Promise<Session> {
    if (this.#session) return this.#session;
    const { session } = await this.#client.json<{ session: Session }>("POST", "/v1/sessions", {});
    this.#session = session;
    this.#note(`new session ${session.id}`);
    return session;
  }

  async #runTurn(content: string): Promise<void> {
    const session = await this.#ensureSession();
    const turn: RunningTurn = { sessionId: session.id, local: new AbortController(), interrupting: false };
    this.#turn = turn;
    let wrote = false;
    let finish: string | null = null;
    let failure: string | null = null;
    try {
      for await (const ev of this.#client.turn(session.id, content, turn.local.signal)) {
        if (ev.event === "delta") {
          const { text } = JSON.parse(ev.data) as { text: string };
          if (!wrote && this.#tty) this.#io.stdout.write(this.#style.cyan("agent › "));
          this.#io.stdout.write(text);
          wrote = true;
        } else if (ev.event === "done") {
          finish = (JSON.parse(ev.data) as { finish_reason: string }).finish_reason;
        } else if (ev.event === "error") {
          failure = (JSON.parse(ev.data) as { message: string }).message;
        }
      }
    } catch (err) {
      if (turn.local.signal.aborted) finish = "interrupted";
      else if (err instanceof ApiRefusal && err.code === "turn_in_progress") failure = "agent is busy: a turn is already running in this session";
      else if (err instanceof CliError) failure = err.message;
      else throw err;
    } finally {
      this.#turn = null;
    }
    if (wrote) this.#out();
    if (finish === "interrupted") this.#note("[interrupted]");
    else if (finish === null && failure === null) failure = "the reply stream ended early";
    if (failure) this.#error(failure);
  }
}
