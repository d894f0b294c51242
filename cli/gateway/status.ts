import type { Writable } from "node:stream";
import type { Style } from "../io.ts";
import type { RelayStatus } from "./client.ts";

/** Seconds for the status line: one decimal under 10 s. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return s < 10 ? `${Number(s.toFixed(1))}s` : `${Math.round(s)}s`;
}

/** The words the status line shows for a state. */
export function statusText(s: RelayStatus, style: Style): string {
  switch (s.state) {
    case "connecting":
      return style.dim("relay: connecting…");
    case "connected":
      return `relay: ${style.green("connected")} (${s.platforms.join(", ")})`;
    case "reconnecting":
      return `relay: ${style.yellow(`reconnecting in ${seconds(s.inMs)}`)} (${s.reason})`;
    case "disabled":
      return `relay: ${style.red("disabled")}`;
  }
}

/**
 * The gateway's stderr: one status line, rewritten in place on a terminal (log lines are
 * printed above it), or plain lines, one per change, when stderr is a file or pipe.
 */
export class StatusLine {
  readonly #out: Writable & { isTTY?: boolean };
  readonly #style: Style;
  #current = "";

  constructor(out: Writable & { isTTY?: boolean }, style: Style) {
    this.#out = out;
    this.#style = style;
  }

  status(s: RelayStatus): void {
    const text = statusText(s, this.#style);
    if (text === this.#current) return;
    this.#current = text;
    this.#out.write(this.#out.isTTY ? `\r\x1b[2K${text}` : `${text}\n`);
  }

  log(line: string): void {
    this.#out.write(this.#out.isTTY ? `\r\x1b[2K${line}\n${this.#current}` : `${line}\n`);
  }

  /** Leaves the cursor on a fresh line. */
  end(): void {
    if (this.#out.isTTY && this.#current) this.#out.write("\n");
    this.#current = "";
  }
}
