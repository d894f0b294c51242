import { describe, expect, it } from "vitest";
import { styleFor } from "../../cli/io.ts";
import { devNextSteps, showWhenReady } from "../../cli/local.ts";

const plain = styleFor({ isTTY: false }, {});

describe("npm run dev", () => {
  it("shows the sign-in link and the chat command once, after wrangler says ready (not before its ~65 lines)", () => {
    let shown = 0;
    const feed = showWhenReady(() => shown++);
    feed("⛅️ wrangler 4.164.0\nYour Worker has access to the following bindings:\n");
    feed("[wrangler:info] \x1b[32mRea");
    expect(shown).toBe(0);
    feed("dy on http://127.0.0.1:8787\x1b[39m\n");
    expect(shown).toBe(1);
    feed("[wrangler:info] Ready on http://127.0.0.1:8787\n");
    expect(shown).toBe(1);
  });

  it("what it shows: the console link with the token, the chat, and a cron trigger that works under wrangler 4", () => {
    expect(devNextSteps("http://127.0.0.1:8787", "tok", plain)).toEqual([
      "",
      "hermes-edge is ready on http://127.0.0.1:8787",
      "  web console: http://127.0.0.1:8787/#token=tok",
      "  chat:        npx hermes-edge chat",
      "  run the cron once: curl http://127.0.0.1:8787/cdn-cgi/handler/scheduled",
    ]);
    expect(devNextSteps("http://127.0.0.1:9000", "tok", plain)[3]).toBe("  chat:        npx hermes-edge chat (with HERMES_EDGE_URL=http://127.0.0.1:9000)");
  });
});
