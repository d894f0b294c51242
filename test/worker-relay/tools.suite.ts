import { describe, expect, it } from "vitest";
import { sl } from "../support/fixtures.ts";
import { settle, toSlack, until } from "../worker/platform-helpers.ts";
import { llm, mcpLog, slack } from "../worker/setup.ts";

// This project has MCP_SERVERS naming the fake MCP server at https://mcp.test (vitest.config.ts).
describe("tools in platform replies", () => {
  it("a live reply shows a status line while a tool runs; /stop aborts the tool's request at the MCP server", async () => {
    llm.then({ kind: "tools", text: "Looking it up.", calls: [{ id: "call_1", name: "docs__slow", arguments: "{}" }] });
    await toSlack(sl.dm("use the slow tool", "U1001", "D8101"));
    await until(() => mcpLog.events.includes("call:slow"), "the slow tool was called");
    await until(() => slack.texts("D8101").some((t) => t.includes("⚙ docs__slow…")), "the status line was shown");
    expect(slack.texts("D8101").find((t) => t.includes("⚙"))).toBe("Looking it up.\n\n_⚙ docs__slow…_");

    await toSlack(sl.slash("stop", "U1001", "D8101"));
    await settle();
    expect(mcpLog.events).toContain("aborted:slow");
    // The status line is gone from what the chat shows at the end.
    expect(slack.texts("D8101").at(-1)).not.toContain("⚙");
  });
});
