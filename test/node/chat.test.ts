import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BUSY_POLL_FIRST_MS } from "../../cli/chat.ts";
import { createCli } from "../../cli/main.ts";
import { SPINNER_FRAME_MS } from "../../cli/spinner.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeWorker, printed } from "../support/fake-worker.ts";
import { serve } from "../support/http.ts";
import { ManualClock } from "../support/manual-clock.ts";

/** The chat in-process against a fake Worker on loopback; time moves only by hand. */
let worker: FakeWorker;

beforeEach(async () => {
  worker = await new FakeWorker().start();
});
afterEach(() => worker.close());

function chat(args: string[], opts: { tty?: boolean; clock?: ManualClock; token?: string } = {}) {
  const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: opts.token ?? worker.token, NO_COLOR: "1" }, undefined, opts);
  const cli = createCli(["chat", ...args], t.io);
  return { ...t, exit: cli.run() };
}

/** Lets pending I/O callbacks run until the clock has a timer waiting (bounded). */
async function untilTimer(clock: ManualClock): Promise<number> {
  for (let i = 0; i < 10_000 && clock.pending().length === 0; i++) await new Promise((r) => setImmediate(r));
  return clock.pending()[0]!;
}

describe("hermes-edge chat", () => {
  it("checks the Worker and the token before the first prompt, and never sends the token to a stranger", async () => {
    const seen: Array<string | null> = [];
    const stranger = await serve((req) => {
      seen.push(req.headers.get("authorization"));
      return new Response("<html>hello</html>", { headers: { "content-type": "text/html" } });
    });
    try {
      const t = memoryIo({ HERMES_EDGE_URL: stranger.url, HERMES_EDGE_TOKEN: "secret", NO_COLOR: "1" });
      expect(await createCli(["chat"], t.io).run()).toBe(1);
      expect(t.err().trim().split("\n")).toHaveLength(1);
      expect(t.err()).toContain(`${stranger.url} answers, but not as a hermes-edge Worker`);
      expect(seen).toEqual([null]);
    } finally {
      await stranger.close();
    }
    const wrong = chat([], { token: "wrong" });
    expect(await wrong.exit).toBe(1);
    expect(wrong.err()).toContain("rejected the token (401)");
    expect(worker.count("POST /v1/sessions")).toBe(0);
  });

  it("piped: lines sent while a reply streams are queued and all sent in order; tool lines go to stderr; unknown events are ignored", async () => {
    const t = chat([]);
    t.stdin.end("one\ntwo\nthree\n");
    const first = await worker.nextTurn();
    expect(first.content).toBe("one");
    first.event("tool", { name: "fetch_url", status: "start", summary: "https://example.com/a" });
    first.event("usage", { input_tokens: 3 });
    first.event("tool", { name: "fetch_url", status: "end" });
    first.reply("r1");
    (await worker.nextTurn()).reply("r2");
    const third = await worker.nextTurn();
    expect(third.content).toBe("three");
    third.reply("r", "3");
    expect(await t.exit).toBe(0);
    expect(t.out()).toBe("r1\nr2\nr3\n");
    expect(t.err()).toContain("  ⚙ fetch_url https://example.com/a\n");
    expect(t.err().match(/⚙/g)).toHaveLength(1);
    expect(t.err()).not.toMatch(/[⠋⠙⠹]/);
  });

  it("on a terminal: a spinner until the first token, erased before the reply; keys typed meanwhile wait for the next prompt", async () => {
    const clock = new ManualClock();
    const t = chat([], { tty: true, clock });
    await printed(t.io.stdout, t.out, "you › ");
    t.stdin.write("hi\r");
    const turn = await worker.nextTurn();
    expect(t.out()).toContain("⠋ thinking…");
    clock.advance(SPINNER_FRAME_MS);
    expect(t.out()).toContain("⠙ thinking…");
    t.stdin.write("and then");
    await new Promise((r) => setImmediate(r));
    turn.event("tool", { name: "fetch_url", status: "start", summary: "https://example.com/" });
    turn.reply("hello there");
    await printed(t.io.stdout, t.out, "hello there");
    const beforeReply = t.out().slice(0, t.out().indexOf("hello there"));
    expect(beforeReply).toMatch(/⠙ thinking…\r\x1b\[2K {2}⚙ fetch_url https:\/\/example.com\/\n[\s\S]*\r\x1b\[2Kagent › $/);
    expect(t.out()).not.toContain("and then");
    // The next prompt offers what was typed; Enter sends it.
    await printed(t.io.stdout, t.out, "and then");
    expect(t.out().lastIndexOf("you › ")).toBeGreaterThan(t.out().indexOf("hello there"));
    expect(t.out().lastIndexOf("and then")).toBeGreaterThan(t.out().lastIndexOf("you › "));
    t.stdin.write(" more\r");
    const second = await worker.nextTurn();
    expect(second.content).toBe("and then more");
    // Enter pressed during a reply queues that line as the next message.
    t.stdin.write("third\r");
    await new Promise((r) => setImmediate(r));
    second.reply("ok");
    const third = await worker.nextTurn();
    expect(third.content).toBe("third");
    third.reply("done");
    // Ctrl-C at the (next) prompt leaves.
    await printed(t.io.stdout, t.out, "done\n\x1b[1G\x1b[0Jyou › ");
    t.stdin.write("\x03");
    expect(await t.exit).toBe(0);
  });

  it("a busy session is waited for, polling with backoff, then the message is sent", async () => {
    worker.transcripts.set("s9", []);
    worker.busy.add("s9");
    const clock = new ManualClock();
    const t = chat(["--resume", "s9"], { clock });
    t.stdin.end("hello\n");
    await worker.seen("POST /v1/sessions/s9/turns");
    expect(await untilTimer(clock)).toBe(BUSY_POLL_FIRST_MS);
    clock.advance(BUSY_POLL_FIRST_MS);
    await worker.seen("GET /v1/sessions/s9", 2);
    expect(await untilTimer(clock)).toBe(BUSY_POLL_FIRST_MS * 2);
    worker.busy.delete("s9");
    clock.advance(BUSY_POLL_FIRST_MS * 2);
    (await worker.nextTurn()).reply("sent");
    expect(await t.exit).toBe(0);
    expect(t.out()).toBe("sent\n");
    expect(t.err()).toContain("the session is busy with another turn; waiting for it to finish");
  });

  it("--no-wait fails at once on a busy session; Ctrl-C stops a wait and the next piped line still goes", async () => {
    worker.transcripts.set("s9", []);
    worker.busy.add("s9");
    const noWait = chat(["--resume", "s9", "--no-wait"]);
    noWait.stdin.end("hello\n");
    expect(await noWait.exit).toBe(1);
    expect(noWait.err()).toContain("agent is busy");
    expect(worker.count("GET /v1/sessions/s9")).toBe(1);

    const clock = new ManualClock();
    const t = chat(["--resume", "s9"], { clock });
    t.stdin.end("first\nsecond\n");
    await untilTimer(clock);
    worker.busy.delete("s9");
    t.io.signals.emit("SIGINT");
    const second = await worker.nextTurn();
    expect(second.content).toBe("second");
    second.reply("got it");
    expect(await t.exit).toBe(1);
    expect(t.out()).toBe("got it\n");
    expect(t.err()).toContain("stopped waiting; the message was not sent");
  });

  it("--resume with stdout piped prints the recap on stderr, keeping stdout for replies", async () => {
    worker.transcripts.set("s7", [
      { role: "user", content: "what is 2+2" },
      { role: "assistant", content: "4" },
    ]);
    const t = chat(["--resume", "s7"]);
    t.stdin.end();
    expect(await t.exit).toBe(0);
    expect(t.out()).toBe("");
    expect(t.err()).toContain("  you: what is 2+2\n  agent: 4\n");
  });
});

describe("stdout closed under the CLI (| head)", () => {
  it("ends quietly with exit code 0", async () => {
    const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token });
    const closedPipe = new Writable({ write: (_c, _e, cb) => cb(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })) });
    const cli = createCli(["sessions", "list"], { ...t.io, stdout: closedPipe });
    expect(await cli.run()).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(cli.stdoutClosed).toBe(true);
    expect(t.err()).toBe("");
  });
});
