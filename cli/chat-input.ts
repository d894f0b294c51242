import readline from "node:readline";
import type { CliIo } from "./io.ts";

/**
 * Where the chat's lines come from. Between `busy()` and `idle()` the agent is working:
 * nothing typed is echoed into its reply, and nothing typed or piped is lost.
 */
export interface ChatInput {
  /** The next line; null at the end of input or when the user leaves (Ctrl-C at an empty prompt, Ctrl-D). */
  next(): Promise<string | null>;
  /** The agent works: keystrokes are held back; Ctrl-C calls `onInterrupt`. */
  busy(onInterrupt: () => void): void;
  idle(): void;
  /** Text to offer again as the start of the next prompt (a message that was not sent). */
  prefill(text: string): void;
  close(): void;
}

/** Lines piped on stdin: read as they come, queued while the agent works, all delivered. */
export class PipedInput implements ChatInput {
  readonly #rl: readline.Interface;
  readonly #queue: string[] = [];
  #waiter: ((line: string | null) => void) | null = null;
  #ended = false;
  #stopped = false;

  constructor(io: CliIo) {
    this.#rl = readline.createInterface({ input: io.stdin, terminal: false });
    this.#rl.on("line", (line) => {
      if (!this.#give(line)) this.#queue.push(line);
    });
    this.#rl.on("close", () => {
      this.#ended = true;
      this.#give(null);
    });
  }

  /** Hands `line` to the reader waiting for one; false when none waits. */
  #give(line: string | null): boolean {
    const w = this.#waiter;
    if (!w) return false;
    this.#waiter = null;
    w(line);
    return true;
  }

  next(): Promise<string | null> {
    if (this.#stopped) return Promise.resolve(null);
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(null);
    return new Promise((resolve) => (this.#waiter = resolve));
  }

  busy(): void {}
  idle(): void {}
  prefill(): void {}

  /** Leaves: the lines not yet taken are dropped (Ctrl-C means stop). */
  close(): void {
    this.#stopped = true;
    this.#rl.close();
    this.#give(null);
  }
}

/**
 * A terminal. Each prompt is its own readline (history kept across them); while the agent
 * works readline is closed and keystrokes are captured unechoed: Enter queues what was
 * typed as the next message, the rest pre-fills the next prompt, Ctrl-C interrupts.
 */
export class TtyInput implements ChatInput {
  readonly #io: CliIo;
  readonly #prompt: string;
  readonly #commands: readonly string[];
  #history: string[] = [];
  readonly #queued: string[] = [];
  #typed = "";
  #escape = false;
  #capture: ((chunk: Buffer | string) => void) | null = null;
  #rl: readline.Interface | null = null;
  #closed = false;

  /** `commands`: the slash commands Tab completes. */
  constructor(io: CliIo, prompt: string, commands: readonly string[] = []) {
    this.#io = io;
    this.#prompt = prompt;
    this.#commands = commands;
  }

  /** Tab on a line that is a slash command being typed: the commands it may become. */
  #complete = (line: string): [string[], string] => {
    if (!line.startsWith("/") || /\s/.test(line)) return [[], line];
    const hits = this.#commands.filter((c) => c.startsWith(line.toLowerCase()));
    // One match gets its space, so the argument can follow at once.
    return [hits.length === 1 ? [`${hits[0]} `] : hits, line];
  };

  next(): Promise<string | null> {
    if (this.#closed) return Promise.resolve(null);
    const queued = this.#queued.shift();
    if (queued !== undefined) {
      this.#io.stdout.write(`${this.#prompt}${queued}\n`);
      this.#history.unshift(queued);
      return Promise.resolve(queued);
    }
    return new Promise((resolve) => {
      const rl = readline.createInterface({
        input: this.#io.stdin,
        output: this.#io.stdout,
        terminal: true,
        prompt: this.#prompt,
        history: this.#history,
        historySize: 200,
        completer: this.#complete,
      });
      this.#rl = rl;
      let settled = false;
      const settle = (line: string | null) => {
        if (settled) return;
        settled = true;
        this.#history = [...(rl as unknown as { history: string[] }).history];
        this.#rl = null;
        rl.close();
        resolve(line);
      };
      rl.on("line", (line) => settle(line));
      rl.on("SIGINT", () => {
        // As shells and REPLs do: Ctrl-C on a half-typed line clears it; at an empty prompt it leaves.
        if (rl.line !== "") {
          rl.write(null, { ctrl: true, name: "e" });
          rl.write(null, { ctrl: true, name: "u" });
          return;
        }
        this.#io.stdout.write("\n");
        settle(null);
      });
      rl.on("close", () => settle(null));
      rl.prompt();
      if (this.#typed) {
        rl.write(this.#typed);
        this.#typed = "";
      }
    });
  }

  #onKeys(chunk: Buffer | string, onInterrupt: () => void): void {
    for (const ch of String(chunk)) {
      if (this.#escape) {
        // The rest of an escape sequence (arrows, function keys): not text.
        if (/[A-Za-z~]/.test(ch)) this.#escape = false;
      } else if (ch === "\x1b") this.#escape = true;
      else if (ch === "\x03") onInterrupt();
      else if (ch === "\r" || ch === "\n") {
        if (this.#typed.trim() !== "") this.#queued.push(this.#typed);
        this.#typed = "";
      } else if (ch === "\x7f" || ch === "\b") this.#typed = this.#typed.slice(0, -1);
      else if (ch >= " ") this.#typed += ch;
    }
  }

  busy(onInterrupt: () => void): void {
    if (this.#capture || this.#closed) return;
    const { stdin } = this.#io;
    this.#capture = (chunk) => this.#onKeys(chunk, onInterrupt);
    stdin.setRawMode?.(true);
    stdin.on("data", this.#capture);
    stdin.resume();
  }

  idle(): void {
    if (!this.#capture) return;
    const { stdin } = this.#io;
    stdin.off("data", this.#capture);
    this.#capture = null;
    // Paused, so keys typed before the next prompt wait in the stream for its readline.
    stdin.pause();
    stdin.setRawMode?.(false);
  }

  prefill(text: string): void {
    this.#typed = text + this.#typed;
  }

  close(): void {
    this.#closed = true;
    this.idle();
    this.#rl?.close();
  }
}
