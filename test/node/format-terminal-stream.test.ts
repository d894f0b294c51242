import { describe, expect, it } from "vitest";
import { renderTerminal, TerminalStream } from "../../workers/format/index.ts";
import { randomMarkdown, rng } from "../support/format-gen.ts";

const PLAIN = { color: false } as const;

/** Feeds `chunks` one by one; returns what each push printed, and what `end` printed. */
function stream(chunks: readonly string[], opts = PLAIN as { color: boolean; width?: number }) {
  const s = new TerminalStream(opts);
  const pushed = chunks.map((c) => s.push(c));
  return { pushed, rest: s.end(), first: s.firstBlock };
}

describe("rendering a reply for the terminal while it streams", () => {
  it("prints a block once the next one starts, and code line by line before its fence closes", () => {
    const { pushed, rest, first } = stream([
      "## Plan\n\nRun **npm",
      " ci** first",
      ", then:\n",
      "\n```sh\nnpx wrangler",
      " deploy\n",
      "npx wrangler tail\n",
      "```\n\nDone.",
    ]);
    expect(pushed).toEqual([
      // A heading is finished at the end of its line.
      "Plan",
      "",
      "",
      // The fence opened: the paragraph is finished. The fence's first line is not complete yet.
      "\n\nRun npm ci first, then:",
      "\n\n    npx wrangler deploy",
      "\n    npx wrangler tail",
      "",
    ]);
    expect(rest).toBe("\n\nDone.");
    expect(first).toBe("heading");
  });

  it("never prints a half-typed construct: an unclosed bold or link waits for its block to end", () => {
    const { pushed, rest } = stream(["Intro **bo", "ld** and [the do", "cs](https://x.io/d)\n", "more\n"]);
    expect(pushed).toEqual(["", "", "", ""]);
    expect(rest).toBe("Intro bold and the docs (https://x.io/d)\nmore");
  });

  it("holds blank code lines until code follows them, as the final rendering drops trailing ones", () => {
    const { pushed, rest } = stream(["```\na\n", "\n", "\n", "b\n", "\n", "```\n"]);
    expect(pushed).toEqual(["    a", "", "", "\n\n\n    b", "", ""]);
    expect(rest).toBe("");
  });

  it("reads CRLF and a CR split from its LF as one line end", () => {
    const { pushed, rest } = stream(["one\r", "\n\r\ntwo\r\n", "```\r", "\nx\r\n"]);
    expect(pushed.join("") + rest).toBe(renderTerminal("one\n\ntwo\n```\nx\n", PLAIN));
    expect(pushed).toEqual(["", "one", "", "\n\ntwo\n\n    x"]);
  });

  it("prints, in all, exactly renderTerminal of the whole reply, whatever the chunks (random replies)", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed);
      const md = randomMarkdown(r);
      const opts = { color: r() < 0.5, ...(r() < 0.5 ? { width: 20 + Math.floor(r() * 80) } : {}) };
      const chunks: string[] = [];
      for (let i = 0; i < md.length; ) {
        const n = 1 + Math.floor(r() * 16);
        chunks.push(md.slice(i, i + n));
        i += n;
      }
      const { pushed, rest } = stream(chunks, opts);
      expect(pushed.join("") + rest, `seed ${seed}`).toBe(renderTerminal(md, opts));
    }
  });

  it("removes control characters, so a reply cannot drive the terminal", () => {
    const { pushed, rest } = stream(["\x1b[2Jcleared?\n\n", "```\n\x1b]0;title\x07x\n```\n"]);
    expect(pushed.join("") + rest).not.toContain("\x1b");
  });
});
