import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FIRST_COPY_DELAY_MS } from "../../durable-objects/session-agent/types.ts";
import { sl } from "../support/fixtures.ts";
import { SLACK_TEST } from "../support/signing.ts";
import { messages } from "./helpers.ts";
import { copiedMessages, sessionFor, settle, toSlack, untilStarted, untilStartedOnTimers } from "./platform-helpers.ts";
import { llm, slack } from "./setup.ts";

const KEY = (channel: string) => `agent:main:slack:dm:${SLACK_TEST.team}:${channel}`;

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
      const id = (await sessionFor(KEY(channel)))!; // both handed on: waiting in the session
      first.release();
      await untilStartedOnTimers(second);
      // The first turn has ended, two more behind it: its messages are in the object, not yet
      // copied (one copy per turn put them in D1 here), unless the copy's deadline has passed.
      expect(await messages(id)).toHaveLength(3);
      // Read first, then the clock: the deadline's timer was set after `began`, so a read that
      // ended before began + FIRST_COPY_DELAY_MS ran before any copy it could have started.
      const midBurst = await copiedMessages(id);
      if (Date.now() - began < FIRST_COPY_DELAY_MS) expect(midBurst).toBe(0);
      second.release();
      await settle();
      expect(slack.texts(channel).filter((t) => t.endsWith(" done") || t.startsWith("echo: "))).toEqual(["one done", "two done", "echo: third"]);
      expect(await sessionFor(KEY(channel))).toBe(id);
      expect(await copiedMessages(id)).toBe(6);
      const copies = (await env.DB.prepare("SELECT COUNT(*) AS n FROM test_copies").first<{ n: number }>())?.n;
      // Three turns were three copies. Now one with the last turn, and one more for each full
      // FIRST_COPY_DELAY_MS the burst outlived (a slow host): the deadline's timer is set after
      // `began` and again only after it fired. Up to 4 s of burst this still tells the two apart.
      expect(copies).toBeGreaterThanOrEqual(1);
      expect(copies).toBeLessThanOrEqual(1 + Math.floor((Date.now() - began) / FIRST_COPY_DELAY_MS));
    } finally {
      await env.DB.batch([
        env.DB.prepare("DROP TRIGGER IF EXISTS test_copies_in"),
        env.DB.prepare("DROP TRIGGER IF EXISTS test_copies_up"),
        env.DB.prepare("DROP TABLE IF EXISTS test_copies"),
      ]);
    }
  });

  it("an object killed mid-burst loses no copy: the instance after it copies the turn that ended before, from its alarm", async () => {
    const channel = "D7312";
    const first = llm.hold(["one "], ["done"]);
    await toSlack(sl.dm("first", "U1002", channel));
    await untilStarted(first);
    const second = llm.hold(["two "], ["never"]);
    await toSlack(sl.dm("second", "U1002", channel));
    const id = (await sessionFor(KEY(channel)))!;
    first.release();
    await untilStartedOnTimers(second);
    // The first turn's copy waits for the second turn's end, which never comes: the object dies.
    await abortAllDurableObjects();
    second.abandon();
    // The next instance finds the rows not yet in D1 (and the turn the dead one left) and sets its alarm.
    expect(await runDurableObjectAlarm(env.SESSION_AGENT.getByName(id))).toBe(true);
    expect(await copiedMessages(id)).toBe(4);
    expect(slack.texts(channel).at(-1)).toBe("echo: second");
    await settle();
  });
});
