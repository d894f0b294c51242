import { EventEmitter } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import type { CliIo } from "../../cli/io.ts";
import { ManualClock } from "./manual-clock.ts";
import { tempDir } from "./temp.ts";

/** A terminal stand-in: a stream that says it is a TTY and records raw-mode switches. */
export class FakeTty extends PassThrough {
  readonly isTTY = true;
  columns = 80;
  raw = false;
  setRawMode(mode: boolean): this {
    this.raw = mode;
    return this;
  }
}

/**
 * In-memory stdio for running the CLI in-process: what it printed, and the io to pass.
 * Home and the config directory are a fresh empty temporary directory, so nothing from
 * the developer's own ~/.config is read. `tty` makes stdin and stdout terminals; `clock`
 * drives the CLI's timers (spinner, backoff) by hand.
 */
export function memoryIo(env: Record<string, string | undefined> = {}, cwd = tmpdir(), opts: { tty?: boolean; clock?: ManualClock } = {}) {
  const stdin = opts.tty ? new FakeTty() : new PassThrough();
  const stdout = opts.tty ? new FakeTty() : new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const home = tempDir("he-home-");
  const clock = opts.clock;
  const io: CliIo = {
    stdin,
    stdout,
    stderr,
    env,
    fetch: (i, init) => fetch(i, init),
    cwd,
    signals: new EventEmitter(),
    now: clock ? () => clock.now() : () => Date.now(),
    timers: clock ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) },
    home,
    configDir: path.join(home, ".config"),
  };
  return { io, out: () => out, err: () => err, stdin };
}
