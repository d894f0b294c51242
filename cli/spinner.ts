import type { Writable } from "node:stream";
import type { Style, Timers } from "./io.ts";

/** A one-line "working" indicator; erased by `stop()` before anything else is written. */
export interface Spinner {
  start(label: string): void;
  stop(): void;
}

const FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
export const SPINNER_FRAME_MS = 80;

/** Does nothing: for output that is not a terminal. */
export const NO_SPINNER: Spinner = { start() {}, stop() {} };

/** A spinner drawn on `stream` (a terminal), its frames driven by `timers`. */
export function spinner(stream: Writable, timers: Timers, style: Style): Spinner {
  let timer: unknown = null;
  let frame = 0;
  let label = "";
  let drawn = false;
  const draw = () => {
    stream.write(`\r\x1b[2K${style.cyan(FRAMES.charAt(frame++ % FRAMES.length))} ${style.dim(label)}`);
    drawn = true;
    timer = timers.setTimeout(draw, SPINNER_FRAME_MS);
  };
  return {
    start(text) {
      label = text;
      if (timer !== null) return;
      frame = 0;
      draw();
    },
    stop() {
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      if (drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}

/**
 * The spinner for a chat: on stdout when it is a terminal (the reply erases it), else on
 * stderr when that is one, else none (piped output stays clean).
 */
export function chatSpinner(out: Writable & { isTTY?: boolean }, err: Writable & { isTTY?: boolean }, timers: Timers, style: Style): Spinner {
  if (out.isTTY) return spinner(out, timers, style);
  if (err.isTTY) return spinner(err, timers, style);
  return NO_SPINNER;
}
