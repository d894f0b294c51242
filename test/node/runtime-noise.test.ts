import { describe, expect, it } from "vitest";
import { dropRuntimeNoise } from "../support/runtime-noise.ts";

// Copied from a run's output: the test plugin writes workerd's entry as one chunk.
const PIPE = "exception = kj/async-io.c++:763: disconnected: read end of pipe was aborted\n";
const STACK = "stack: /w/node_modules/@cloudflare/workerd-linux-64/bin/workerd@631ffc0 /w/bin/workerd@6320111\n";

function sink() {
  const written: unknown[] = [];
  const stream = { write: ((chunk: unknown) => written.push(chunk) > 0) as NodeJS.WriteStream["write"] };
  dropRuntimeNoise(stream);
  dropRuntimeNoise(stream);
  return { stream, written };
}

describe("dropRuntimeNoise", () => {
  it("drops the pipe entry, with or without its stack line", () => {
    const { stream, written } = sink();
    stream.write("before\n");
    stream.write(PIPE + STACK);
    stream.write(PIPE);
    stream.write("after\n");
    expect(written).toEqual(["before\n", "after\n"]);
  });

  it("keeps every other entry, a stack line on its own, and an entry that only contains the line", () => {
    const { stream, written } = sink();
    const kept = [
      "uncaught exception; source = Uncaught (in promise); exception = Error: boom\n",
      STACK,
      "exception = kj/async-io.c++:763: disconnected: something else\n",
      `${PIPE}FAIL test/worker/all.test.ts\n`,
      `x ${PIPE}`,
    ];
    for (const chunk of kept) stream.write(chunk);
    const buf = new Uint8Array([1, 2]);
    stream.write(buf);
    expect(written).toEqual([...kept, buf]);
  });
});
