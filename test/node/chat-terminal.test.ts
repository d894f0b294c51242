import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeWorker, printed } from "../support/fake-worker.ts";

/** The terminal chat's line editing and lists, against a fake Worker and a fake terminal. */
let worker: FakeWorker;

beforeEach(async () => {
  worker = await new FakeWorker().start();
});
afterEach(() => worker.close());

function chat(args: string[] = [], columns = 80) {
  const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" }, undefined, { tty: true });
  t.io.stdout.columns = columns;
  return { ...t, exit: createCli(["chat", ...args], t.io).run() };
}

describe("the terminal chat", () => {
  it("Ctrl-C on a half-typed line clears the line and keeps the chat; Ctrl-D at an empty prompt leaves", async () => {
    const t = chat();
    await printed(t.io.stdout, t.out, "you › ");
    t.stdin.write("half a thought");
    await printed(t.io.stdout, t.out, "half a thought");
    t.stdin.write("\x03");
    t.stdin.write("hi\r");
    const turn = await worker.nextTurn();
    expect(turn.content).toBe("hi");
    turn.reply("hello");
    await printed(t.io.stdout, t.out, "hello\n\x1b[1G\x1b[0Jyou › ");
    t.stdin.write("\x04");
    expect(await t.exit).toBe(0);
    expect(worker.count("POST /v1/sessions")).toBe(1);
  });

  it("Tab completes a slash command, and /sessions marks the chat's own session", async () => {
    worker.transcripts.set("s-other", []);
    const t = chat();
    await printed(t.io.stdout, t.out, "you › ");
    t.stdin.write("first\r");
    (await worker.nextTurn()).reply("ok");
    await printed(t.io.stdout, t.out, "ok\n\x1b[1G\x1b[0Jyou › ");
    t.stdin.write("/ses\t");
    await printed(t.io.stdout, t.out, "/sessions ");
    t.stdin.write("\r");
    await worker.seen("GET /v1/sessions?limit=10");
    await printed(t.io.stdout, t.out, "(current)");
    const list = t
      .out()
      .split("\n")
      .filter((l) => /^[* ] ?\d+\. /.test(l));
    expect(list.find((l) => l.includes("s-other"))).toMatch(/^ {2}\d\. s-other/);
    expect(list.find((l) => l.includes("(current)"))).toMatch(/^\* {1}\d\. s1\b/);
    t.stdin.write("\x03");
    expect(await t.exit).toBe(0);
  });

  it("/resume's recap wraps at word boundaries to the terminal's width, indented under itself", async () => {
    const long = "the deploy failed because the binding named SESSIONS was missing from the configuration file";
    worker.transcripts.set("s7", [
      { role: "user", content: long },
      { role: "assistant", content: "add the binding under durable_objects and deploy again please" },
    ]);
    const t = chat(["--resume", "s7"], 40);
    await printed(t.io.stdout, t.out, "you › ");
    const recap = t
      .out()
      .slice(t.out().indexOf("last exchanges:") + "last exchanges:\n".length, t.out().indexOf("you › "))
      .replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")
      .trimEnd()
      .split("\n");
    for (const l of recap) expect(l.length, l).toBeLessThanOrEqual(40);
    expect(recap.join(" ").replace(/\s+/g, " ").trim()).toBe(`you: ${long} agent: add the binding under durable_objects and deploy again please`);
    expect(recap[0]).toMatch(/^ {2}you: /);
    expect(recap[1]).toMatch(/^ {7}\S/);
    t.stdin.write("\x03");
    expect(await t.exit).toBe(0);
  });

  it("/handoff to a platform that is not configured names the settings it lacks and the setup command", async () => {
    worker.transcripts.set("s3", []);
    worker.platforms = [
      {
        name: "telegram",
        enabled: false,
        relay: false,
        home_channel: null,
        missing: ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"],
        setup: "npx hermes-edge setup telegram --url http://x",
      },
    ];
    const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" });
    const exit = createCli(["chat", "--resume", "s3"], t.io).run();
    t.stdin.end("/handoff telegram\n");
    expect(await exit).toBe(1);
    expect(t.err()).toContain(
      "error: telegram is not configured on the Worker: set TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET on the Worker (locally in .dev.vars, then restart it; deployed: npx wrangler secret put <NAME>), then run npx hermes-edge setup telegram --url http://x",
    );
  });
});
