import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { minutesAgo, parkedSession } from "../../cli/sessions.ts";
import type { Session } from "../../cli/api-types.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeWorker, printed } from "../support/fake-worker.ts";

/** Sessions parked for the CLI by `/handoff cli` in a chat, and `hermes-edge link`. */
let worker: FakeWorker;

beforeEach(async () => {
  worker = await new FakeWorker().start();
});
afterEach(() => worker.close());

const parked = (finishedAt: number, from = "telegram") => ({
  state: "completed",
  platform: "cli",
  from,
  error: null,
  requested_at: finishedAt - 1000,
  claimed_at: finishedAt - 900,
  finished_at: finishedAt,
  destination: { chat_id: "cli", thread_id: null, url: null },
});

function session(id: string, lastActive: number, handoff: unknown): Session {
  return { id, last_active_at: lastActive, handoff } as unknown as Session;
}

describe("a session parked for the CLI", () => {
  it("is the newest one handed to the CLI and not continued since, within a day", () => {
    const now = Date.UTC(2026, 11, 3, 12);
    const s = [
      session("continued", now - 60_000, parked(now - 120_000)),
      session("older", now - 600_000, parked(now - 500_000)),
      session("newer", now - 300_000, parked(now - 200_000)),
      session("to-slack", now - 300_000, { ...parked(now - 100_000), platform: "slack" }),
      session("stale", 0, parked(now - 25 * 3600_000)),
    ];
    expect(parkedSession(s, now)?.id).toBe("newer");
    expect(parkedSession([s[0]!, s[3]!, s[4]!], now)).toBeNull();
    expect(minutesAgo(now - 2 * 60_000 - 5000, now)).toBe("2 min ago");
  });

  it("hermes-edge chat offers it on a terminal (Enter resumes it), and --resume latest takes it piped", async () => {
    const now = Date.now();
    worker.transcripts.set("s-parked", [{ role: "user", content: "debug the deploy" }]);
    worker.transcripts.set("s-recent", []);
    worker.handoffs.set("s-parked", parked(now - 2 * 60_000 - 5000));
    worker.lastActive.set("s-parked", now - 3 * 60_000);
    worker.lastActive.set("s-recent", now);

    const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" }, undefined, { tty: true });
    const exit = createCli(["chat"], t.io).run();
    await printed(t.io.stderr, t.err, "[Y/n] ");
    expect(t.err()).toContain("a session was handed to the CLI from telegram 2 min ago: resume? [Y/n] ");
    t.stdin.write("\n");
    await printed(t.io.stdout, t.out, "you › ");
    expect(t.out()).toContain("resumed s-parked");
    t.stdin.write("\x04");
    expect(await exit).toBe(0);

    const piped = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" });
    const run = createCli(["chat", "--resume", "latest"], piped.io).run();
    piped.stdin.end("where were we?\n");
    const turn = await worker.nextTurn();
    expect(turn.sessionId).toBe("s-parked");
    turn.reply("here");
    expect(await run).toBe(0);
  });
});

describe("hermes-edge link", () => {
  it("links the CLI with the code a chat gave, and says who it is now; a wrong code is an error", async () => {
    const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" });
    expect(await createCli(["link", "ABCD-EFGH"], t.io).run()).toBe(0);
    expect(t.out()).toBe("Linked: this CLI is now the same person as telegram user 1001.\n");
    const bad = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" });
    expect(await createCli(["link", "ZZZZ-ZZZZ"], bad.io).run()).toBe(1);
    expect(bad.err()).toContain("That code is wrong, used or expired.");
  });
});
