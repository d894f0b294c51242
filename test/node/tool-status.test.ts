import { describe, expect, it } from "vitest";
import { renderMessage } from "../../workers/format/index.ts";
import { toolLine } from "../../workers/runtime/reply.ts";

describe("the status line of a running tool", () => {
  it("shows the call's summary, cut to one short line, and formats or links nothing the arguments hold", () => {
    const line = toolLine("fetch_url", "fetch_url https://evil.example/[click](javascript:alert(1)) **bold** `code` <b>x</b>\n# heading");
    expect(line.endsWith("…")).toBe(true);
    const [tg] = renderMessage(`_${line}_`, "telegram", { limit: 4096, unit: "utf16" });
    expect(tg!.text).toBe("⚙ fetch_url https://evil.example/[click](javascript:alert(1)) **bold** `code` <…");
    expect(tg!.entities!.map((e) => e.type)).toEqual(["italic"]);
    const [slack] = renderMessage(`_${line}_`, "slack", { limit: 4000, unit: "utf16" });
    // Slack: no link markup (`<url|label>`), the angle bracket escaped.
    expect(slack!.text).toBe("_⚙ fetch_url https://evil.example/[click](javascript:alert(1)) **bold** `code` &lt;…_");
    expect(toolLine("docs__slow", "")).toBe("⚙ docs\\_\\_slow…");
  });
});
