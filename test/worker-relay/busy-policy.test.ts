import { describe, expect, it } from "vitest";
import { sl } from "../support/fixtures.ts";
import { settle, toSlack } from "../worker/platform-helpers.ts";
import { llm, slack } from "../worker/setup.ts";

describe("BUSY_POLICY=interrupt", () => {
  it("a message sent during a turn stops that turn and is answered next", async () => {
    const gate = llm.hold(["first answer, cut "], ["never"]);
    await toSlack(sl.dm("first question", "U1001", "D9009"));
    await toSlack(sl.dm("actually, this instead", "U1001", "D9009"));
    await settle();
    expect(gate.cancelled || !gate.started).toBe(true);
    const texts = slack.texts("D9009");
    expect(texts.at(-1)).toBe("echo: actually, this instead");
    expect(llm.calls.at(-1)!.body.messages.map((m) => m.content)).toEqual(["first question", expect.stringMatching(/^first answer, cut|^$/), "actually, this instead"]);
  });
});
