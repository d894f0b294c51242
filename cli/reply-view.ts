import type { Writable } from "node:stream";
import { displayWidth, TerminalStream } from "../workers/format/index.ts";
import type { Style } from "./io.ts";
import type { Spinner } from "./spinner.ts";

/** How a streamed reply reaches stdout. */
export interface ReplyView {
  /** More of the reply. */
  text(delta: string): void;
  /** Prints whatever is held back (before a tool line, and when the reply ends). */
  flush(): void;
  /** Whether anything of the reply was printed. */
  readonly wrote: boolean;
  /** Ends the reply's open line, if it left one (before a line that is not the reply's, and at the end). */
  breakLine(): void;
}

export interface ViewOptions {
  out: Writable & { isTTY?: boolean; columns?: number };
  style: Style;
  spinner: Spinner;
  /** The label before a reply (`agent › ` in an interactive chat, unstyled), or none. */
  label: string | null;
}

/**
 * The view for stdout: rendered Markdown on a terminal, the reply exactly as the model wrote
 * it otherwise (scripts reading a pipe get the raw text, byte for byte, as they always did).
 */
export function replyView(o: ViewOptions): ReplyView {
  return o.out.isTTY ? new TerminalView(o) : new RawView(o);
}

/** Deltas written as they come. */
class RawView implements ReplyView {
  readonly #o: ViewOptions;
  wrote = false;
  #lineOpen = false;

  constructor(o: ViewOptions) {
    this.#o = o;
  }

  breakLine(): void {
    if (this.#lineOpen) this.#o.out.write("\n");
    this.#lineOpen = false;
  }

  text(delta: string): void {
    if (delta === "") return;
    this.#o.spinner.stop();
    if (!this.wrote && this.#o.label) this.#o.out.write(this.#o.style.cyan(this.#o.label));
    this.#o.out.write(delta);
    this.wrote = true;
    this.#lineOpen = !delta.endsWith("\n");
  }

  flush(): void {}
}

/** An SGR sequence (the only escapes renderTerminal emits), for measuring what a line shows. */
const SGR = /\x1b\[[0-9;]*m/g;

/**
 * Markdown rendered for the terminal as it streams (see `TerminalStream`): whole blocks once
 * complete, code line by line, nothing ever rewritten, so a narrow terminal, a resize or a
 * reply taller than the screen cannot garble it. Colour follows the chat's style (a TTY
 * without NO_COLOR). The spinner runs on the line below while the next block is written.
 */
class TerminalView implements ReplyView {
  readonly #o: ViewOptions;
  readonly #width: number | undefined;
  #stream: TerminalStream;
  wrote = false;

  constructor(o: ViewOptions) {
    this.#o = o;
    this.#width = o.out.columns && o.out.columns > 0 ? o.out.columns : undefined;
    this.#stream = this.#fresh();
  }

  #fresh(): TerminalStream {
    return new TerminalStream({ color: this.#o.style.enabled, ...(this.#width ? { width: this.#width } : {}) });
  }

  text(delta: string): void {
    if (delta === "") return;
    const chunk = this.#stream.push(delta);
    if (chunk !== "") this.#print(chunk, this.#stream.firstBlock);
    this.#o.spinner.start("writing…");
  }

  /** Every chunk ends its line. */
  breakLine(): void {}

  flush(): void {
    const chunk = this.#stream.end();
    this.#print(chunk, this.#stream.firstBlock);
    this.#stream = this.#fresh();
  }

  #print(chunk: string, firstBlock: string | null): void {
    if (chunk === "") return;
    this.#o.spinner.stop();
    let text = chunk;
    if (this.wrote) {
      // The line break after the last chunk was written already (the cursor waits on a line of its own).
      text = chunk.startsWith("\n") ? chunk.slice(1) : chunk;
    } else if (this.#o.label) {
      // A short first paragraph sits on the label's line; anything else starts below it.
      const label = this.#o.label;
      const inline =
        (firstBlock === "paragraph" || firstBlock === "heading") &&
        !chunk.includes("\n") &&
        (!this.#width || displayWidth(label + chunk.replace(SGR, "")) <= this.#width);
      this.#o.out.write(inline ? this.#o.style.cyan(label) : `${this.#o.style.cyan(label.trimEnd())}\n`);
    }
    this.#o.out.write(`${text}\n`);
    this.wrote = true;
  }
}
