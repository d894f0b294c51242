import type { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";

/** Everything the CLI touches outside itself, so tests can run it in-process. */
export interface CliIo {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  cwd: string;
  /** Where SIGINT arrives when stdin is not a terminal (the process, in real use). */
  signals: EventEmitter;
  now: () => number;
}

export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    fetch: (input, init) => fetch(input, init),
    cwd: process.cwd(),
    signals: process,
    now: () => Date.now(),
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
