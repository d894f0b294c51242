import type { EventEmitter } from "node:events";
import { homedir } from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";

/** Timers the CLI waits with (spinner frames, backoff), so tests can move time by hand. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Everything the CLI touches outside itself, so tests can run it in-process. */
export interface CliIo {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  cwd: string;
  /** Where SIGINT arrives when stdin is not a terminal (the process, in real use). */
  signals: EventEmitter;
  now: () => number;
  timers: Timers;
  /** The user's home directory. */
  home: string;
  /** Where per-user configuration lives: $XDG_CONFIG_HOME, else ~/.config. */
  configDir: string;
}

/** $XDG_CONFIG_HOME when it is an absolute path (the XDG rule), else `<home>/.config`. */
export function userConfigDir(env: Record<string, string | undefined>, home: string): string {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  return xdg && path.isAbsolute(xdg) ? xdg : path.join(home, ".config");
}

/** The real process: its stdio, environment, network, signals and clock. */
export function processIo(): CliIo {
  const home = homedir();
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    fetch: (input, init) => fetch(input, init),
    cwd: process.cwd(),
    signals: process,
    now: () => Date.now(),
    timers: { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) },
    home,
    configDir: userConfigDir(process.env, home),
  };
}

/** ANSI styling, off when the stream is not a terminal or NO_COLOR is set. */
export interface Style {
  enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

export function styleFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): Style {
  const enabled = Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== "dumb";
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Writes a line. */
export function println(stream: Writable, text = ""): void {
  stream.write(`${text}\n`);
}

/** Asks for a visible line on a terminal (the prompt goes to stderr); null at end of input. */
export function askLine(io: CliIo, prompt: string): Promise<string | null> {
  io.stderr.write(prompt);
  return new Promise((resolve) => {
    let value = "";
    const finish = (line: string | null) => {
      io.stdin.off("data", onData);
      io.stdin.off("end", onEnd);
      io.stdin.pause();
      resolve(line);
    };
    const onData = (chunk: Buffer | string) => {
      value += String(chunk);
      const nl = value.indexOf("\n");
      if (nl >= 0) finish(value.slice(0, nl).trim());
    };
    const onEnd = () => finish(null);
    io.stdin.on("data", onData);
    io.stdin.on("end", onEnd);
    io.stdin.resume();
  });
}

/**
 * Escape sequences whole (CSI, OSC such as 52's clipboard write and the window title, DCS,
 * SOS/PM/APC, and two-byte ESC codes), in their 7-bit and 8-bit (C1) forms, then any other
 * C0 or C1 control: what a platform user's text could use to drive the operator's terminal.
 */
const SEQUENCES =
  /(?:\x1b\[|\x9b)[\x20-\x3f]*[\x40-\x7e]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]?/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text that came from the Worker, made safe to print on a terminal or into a pipe: escape
 * sequences and control characters removed; newlines and tabs kept. The CLI's one door for
 * the Worker's data ({@link ApiClient}) applies it, so every command's output is covered.
 */
export function safeText(text: string): string {
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
}

/** Every string in a parsed JSON value through {@link safeText} (keys too). */
export function safeValue<T>(value: T): T {
  if (typeof value === "string") return safeText(value) as T;
  if (Array.isArray(value)) return value.map(safeValue) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [safeText(k), safeValue(v)])) as T;
  }
  return value;
}

/**
 * A JSON text (a JSONL export) made safe to print without changing what it says: a raw
 * control character (JSON.stringify escapes C0, not DEL or C1) becomes its \u escape.
 */
export function safeJsonText(text: string): string {
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
