import { EventEmitter } from "node:events";
import { tmpdir } from "node:os";
import { PassThrough } from "node:stream";
import type { CliIo } from "../../cli/io.ts";

/** In-memory stdio for running the CLI in-process: what it printed, and the io to pass. */
export function memoryIo(env: Record<string, string | undefined> = {}, cwd = tmpdir()) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d: Buffer) => (out += d.toString()));
  stderr.on("data", (d: Buffer) => (err += d.toString()));
  const io: CliIo = { stdin: new PassThrough(), stdout, stderr, env, fetch: (i, init) => fetch(i, init), cwd, signals: new EventEmitter(), now: () => Date.now() };
  return { io, out: () => out, err: () => err };
}
