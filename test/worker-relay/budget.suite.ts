import { describe, expect, it } from "vitest";
import { sl } from "../support/fixtures.ts";
import { SLACK_TEST } from "../support/signing.ts";
import { newSession, postTurn, readEvents, deltas } from "../worker/helpers.ts";
import { copiedMessages, sessionFor, settle, toSlack, untilStartedOnTimers } from "../worker/platform-helpers.ts";
import { llm, slack } from "../worker/setup.ts";

// This project runs with DAILY_TOKEN_BUDGET=50000 (vitest.config.ts).
describe("DAILY_TOKEN_BUDGET", () => {
  it("a platform user over today's tokens gets one clear message with when it resets, and no turn; the CLI is not limited", async () => {
    llm.then({ kind: "text", chunks: ["a long answer"], usage: { prompt_tokens: 40_000, completion_tokens: 15_000 } });
    await toSlack(sl.dm("first question", "U1002", "D8001"));
    await settle();
    expect(slack.texts("D8001").at(-1)).toBe("a long answer");
    const calls = llm.calls.length;

    await toSlack(sl.dm("second question", "U1002", "D8001"));
    await settle();
    const told = slack.texts("D8001").at(-1)!;
    expect(told).toMatch(
      /^You have used today's allowance of 50,000 tokens \(55,000 so far\), so this message was not answered\. It resets at 00:00 UTC, in (\d+ h )?\d+ min\.$/,
    );
    expect(llm.calls.length).toBe(calls);

    // Told once a day: a third message is dropped without another notice.
    const sent = slack.texts("D8001").length;
    await toSlack(sl.dm("third question", "U1002", "D8001"));
    await settle();
    expect(slack.texts("D8001")).toHaveLength(sent);
    expect(llm.calls.length).toBe(calls);

    // Another user in the workspace is not affected, nor is the CLI.
    await toSlack(sl.dm("my own question", "U1001", "D8002"));
    await settle();
    expect(slack.texts("D8002").at(-1)).toBe("echo: my own question");
    const id = await newSession();
    llm.then({ kind: "text", chunks: ["still answered"], usage: { prompt_tokens: 90_000, completion_tokens: 1 } });
    expect(deltas(await readEvents(await postTurn(id, "cli question")))).toBe("still answered");
    expect(deltas(await readEvents(await postTurn(id, "and another")))).toBe("echo: and another");
  });

  it("regression: a turn that ended with another waiting left its copy (its usage) to the next turn's end; with a budget, D1 has it before the next turn is admitted", async () => {
    const channel = "D8311";
    const first = llm.hold(["cut "], ["never"]);
    await toSlack(sl.dm("first", "U1021", channel));
    await untilStartedOnTimers(first);
    const second = llm.hold(["two "], ["done"]);
    // BUSY_POLICY=interrupt here: the first turn ends at once, with this one waiting behind it.
    await toSlack(sl.dm("second", "U1021", channel));
    await untilStartedOnTimers(second);
    const id = (await sessionFor(`agent:main:slack:dm:${SLACK_TEST.team}:${channel}`))!;
    expect(await copiedMessages(id)).toBeGreaterThanOrEqual(1);
    second.release();
    await settle();
    expect(slack.texts(channel).at(-1)).toBe("two done");
  });
});
