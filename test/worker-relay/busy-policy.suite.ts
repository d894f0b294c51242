import { describe, expect, it } from "vitest";
import { sl } from "../support/fixtures.ts";
import { settle, toSlack, untilStarted } from "../worker/platform-helpers.ts";
import { conversation } from "../support/fake-llm.ts";
import { llm, slack } from "../worker/setup.ts";

describe("BUSY_POLICY=interrupt", () => {
  it("a message sent during a turn stops that turn and is answered next", async () => {
    const gate = llm.hold(["first answer, cut "], ["never"]);
    await toSlack(sl.dm("first question", "U1001", "D9009"));
    await untilStarted(gate);
    await toSlack(sl.dm("actually, this instead", "U1001", "D9009"));
    await settle();
    expect(gate.cancelled).toBe(true);
    const texts = slack.texts("D9009");
    expect(texts.at(-1)).toBe("echo: actually, this instead");
    expect(conversation(llm.calls.at(-1)!.body).map((m) => m.content)).toEqual([
      "first question",
      expect.stringMatching(/^first answer, cut|^$/),
      "actually, this instead",
    ]);
  });
});
