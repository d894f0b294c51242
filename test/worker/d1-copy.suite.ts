import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FIRST_COPY_DELAY_MS } from "../../durable-objects/session-agent/types.ts";
import type { Gate } from "../support/fake-llm.ts";
import { sl } from "../support/fixtures.ts";
import { SLACK_TEST } from "../support/signing.ts";
import { messages } from "./helpers.ts";
import { sessionFor, settle, toSlack, untilStarted } from "./platform-helpers.ts";
import { llm, slack } from "./setup.ts";

const KEY = (channel: string) => `agent:main:slack:dm:${SLACK_TEST.team}:${channel}`;

/** D1 rows of a session's transcript. */
async function copied(sessionId: string): Promise<number> {
  return (await env.DB.prepare("SELECT COUNT(*) AS n FROM messages WHERE session_id = ?").bind(sessionId).first<{ n: number }>())?.n ?? -1;
}

/**
 * Waits for a held model stream that starts after a release: the fake polls its gate on real
 * 2 ms timers, which a loop of RPCs (until()) never lets run, so this yields to them (bounded).
 */
async function startedAfterRelease(gate: Gate): Promise<void> {
  for (let i = 0; i < 5_000 && !gate.started; i++) await scheduler.wait(1);
  expect(gate.started, "the next turn reached the model").toBe(true);
}

describe("the D1 copy of a session", () => {
  it("a turn that ends with more waiting leaves its copy to a later one; the burst reaches D1 in one copy, all of it", async () => {
    const channel = "D7311";
    // Counts the session row's copies into D1 (each copy writes it once, in one batch with the transcript rows).
    await env.DB.batch([
      env.DB.prepare("CREATE TABLE IF NOT EXISTS test_copies (n INTEGER NOT NULL)"),
      env.DB.prepare(
        `CREATE TRIGGER IF NOT EXISTS test_copies_in AFTER INSERT ON sessions WHEN NEW.session_key = '${KEY(channel)}' BEGIN INSERT INTO test_copies VALUES (1); END`,
      ),
      env.DB.prepare(
        `CREATE TRIGGER IF NOT EXISTS test_copies_up AFTER UPDATE ON sessions WHEN NEW.session_key = '${KEY(channel)}' BEGIN INSERT INTO test_copies VALUES (1); END`,
      ),
    ]);
    try {
      const began = Date.now();
      const first = llm.hold(["one "], ["done"]);
      await toSlack(sl.dm("first", "U1002", channel));
      await untilStarted(first);
      const second = llm.hold(["two "], ["done"]);
      await toSlack(sl.dm("second", "U1002", channel));
      await toSlack(sl.dm("third", "U1002", channel));
      await env.INBOX.getByName(KEY(channel)).idle(); // both handed on: waiting in the session
      const id = (await env.INBOX.getByName(KEY(channel)).session())!;
      first.release();
      await startedAfterRelease(second);
      // The first turn has ended, two more behind it: its messages are in the object, not yet
      // copied (one copy per turn put them in D1 here), unless the copy's deadline has passed.
      expect(await messages(id)).toHaveLength(3);
      if (Date.now() - began < FIRST_COPY_DELAY_MS) expect(await copied(id)).toBe(0);
      second.release();
      await settle();
      expect(slack.texts(channel).filter((t) => t.endsWith(" done") || t.startsWith("echo: "))).toEqual(["one done", "two done", "echo: third"]);
      expect(await sessionFor(KEY(channel))).toBe(id);
      expect(await copied(id)).toBe(6);
      const copies = (await env.DB.prepare("SELECT COUNT(*) AS n FROM test_copies").first<{ n: number }>())?.n;
      // Three turns were three copies. A burst that outlived the deadline (a slow host) has one more per deadline.
      if (Date.now() - began < FIRST_COPY_DELAY_MS) expect(copies).toBe(1);
      else expect(copies).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - began) / FIRST_COPY_DELAY_MS));
    } finally {
      await env.DB.batch([
        env.DB.prepare("DROP TRIGGER IF EXISTS test_copies_in"),
        env.DB.prepare("DROP TRIGGER IF EXISTS test_copies_up"),
        env.DB.prepare("DROP TABLE IF EXISTS test_copies"),
      ]);
    }
  });
});
