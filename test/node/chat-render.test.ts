import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeWorker, printed } from "../support/fake-worker.ts";
import { ManualClock } from "../support/manual-clock.ts";

/** How the chat prints a Markdown reply: rendered on a terminal, exactly as written into a pipe. */
let worker: FakeWorker;

beforeEach(async () => {
  worker = await new FakeWorker().start();
});
afterEach(() => worker.close());

function chat(opts: { tty?: boolean; color?: boolean } = {}) {
  const env = { HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, ...(opts.color ? {} : { NO_COLOR: "1" }) };
  const t = memoryIo(env, undefined, { ...(opts.tty ? { tty: true } : {}), clock: new ManualClock() });
  return { ...t, exit: createCli(["chat"], t.io).run() };
}

/** What the terminal shows: the spinner's frames and its erasing taken out. */
const screen = (out: string) => out.replace(/\r\x1b\[2K(?:\x1b\[\d+m)?[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏][^\r]*/g, "").replaceAll("\r\x1b[2K", "");

const REPLY = [
  "## Plan\n\nRun **npm",
  " ci** first, then:\n",
  "\n```sh\nnpx wrangler deploy\n",
  "npx wrangler tail\n```\n\nSee [the docs](https://developers.cloudflare.com/workers/).",
];

describe("chat replies", () => {
  it("piped: stdout carries the reply exactly as the model wrote it, Markdown and all", async () => {
    const t = chat();
    t.stdin.end("deploy?\n");
    (await worker.nextTurn()).reply(...REPLY);
    expect(await t.exit).toBe(0);
    expect(t.out()).toBe(`${REPLY.join("")}\n`);
  });

  it("on a terminal: Markdown rendered block by block as it streams, code line by line, never a raw marker", async () => {
    const t = chat({ tty: true });
    await printed(t.io.stdout, t.out, "you › ");
    t.stdin.write("deploy?\r");
    const turn = await worker.nextTurn();
    turn.event("delta", { text: REPLY[0] });
    turn.event("delta", { text: REPLY[1] });
    turn.event("delta", { text: REPLY[2] });
    // The heading and the paragraph are out, and the code's first line, before the fence closes.
    await printed(t.io.stdout, t.out, "    npx wrangler deploy\n");
    const midway = screen(t.out().slice(t.out().indexOf("agent")));
    expect(midway).toBe("agent › Plan\n\nRun npm ci first, then:\n\n    npx wrangler deploy\n");
    turn.reply(REPLY[3]!);
    await printed(t.io.stdout, t.out, "(https://developers.cloudflare.com/workers/).\n");
    const all = screen(t.out().slice(t.out().indexOf("agent")));
    expect(all).toMatch(
      /^agent › Plan\n\nRun npm ci first, then:\n\n {4}npx wrangler deploy\n {4}npx wrangler tail\n\nSee the docs \(https:\/\/developers\.cloudflare\.com\/workers\/\)\.\n/,
    );
    expect(all).not.toMatch(/\*\*|```|\[the docs\]/);
    t.stdin.write("\x03");
    expect(await t.exit).toBe(0);
  });

  it("on a terminal without NO_COLOR: ANSI styles; a reply opening with code starts below the label", async () => {
    const t = chat({ tty: true, color: true });
    await printed(t.io.stdout, t.out, "you › ");
    t.stdin.write("code please\r");
    (await worker.nextTurn()).reply("```ts\nconst ok = a < b;\n```\n\nThat is **all**.");
    await printed(t.io.stdout, t.out, "all");
    const all = screen(t.out().slice(t.out().indexOf("agent")));
    expect(all).toContain("agent ›\x1b[39m\n\x1b[2m┌ ts\x1b[0m\n\x1b[2m│ const ok = a < b;\x1b[0m\n\x1b[2m└\x1b[0m\n\nThat is \x1b[0m\x1b[1mall\x1b[0m.\n");
    t.stdin.write("\x03");
    expect(await t.exit).toBe(0);
  });
});
