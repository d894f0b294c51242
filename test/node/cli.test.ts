import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveTarget } from "../../cli/client.ts";
import { styleFor } from "../../cli/io.ts";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { freePort, serve } from "../support/http.ts";

const io = memoryIo;

describe("hermes-edge CLI", () => {
  it("prints help for itself and for each command, with exit code 0", async () => {
    for (const argv of [["--help"], ["chat", "--help"], ["sessions", "--help"], ["start", "--help"], ["dev", "--help"]]) {
      const t = io();
      expect(await createCli(argv, t.io).run(), argv.join(" ")).toBe(0);
      expect(t.out(), argv.join(" ")).toMatch(/Usage: hermes-edge/);
    }
  });

  it("refuses unknown commands and options with exit code 2 and the usage", async () => {
    const a = io();
    expect(await createCli(["fly"], a.io).run()).toBe(2);
    expect(a.err()).toContain("unknown command 'fly'");
    const b = io();
    expect(await createCli(["sessions", "list", "--nope"], b.io).run()).toBe(2);
    expect(b.err()).toContain("Unknown option '--nope'");
  });

  it("says in one line that the Worker is unreachable", async () => {
    const port = await freePort();
    const t = io({ HERMES_EDGE_URL: `http://127.0.0.1:${port}`, HERMES_EDGE_TOKEN: "x" });
    expect(await createCli(["sessions", "list"], t.io).run()).toBe(1);
    expect(t.err().trim().split("\n")).toHaveLength(1);
    expect(t.err()).toContain(`cannot reach hermes-edge at http://127.0.0.1:${port}`);
  });

  it("explains a 503 from a Worker with no API_TOKEN", async () => {
    const server = await serve(() => Response.json({ error: { code: "not_configured", message: "API_TOKEN is not set on this Worker" } }, { status: 503 }));
    try {
      const t = io({ HERMES_EDGE_URL: server.url, HERMES_EDGE_TOKEN: "x" });
      expect(await createCli(["sessions", "list"], t.io).run()).toBe(1);
      expect(t.err()).toContain("is not configured: API_TOKEN is not set");
    } finally {
      await server.close();
    }
  });

  it("finds the local token in ./.dev.vars only for a loopback Worker with no HERMES_EDGE_TOKEN", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "he-cli-"));
    writeFileSync(path.join(dir, ".dev.vars"), "# local\nAPI_TOKEN=from-file\n");
    const at = (env: Record<string, string>) => resolveTarget({ env, cwd: dir, configDir: path.join(dir, "no-config") });
    expect(at({})).toEqual({ baseUrl: "http://127.0.0.1:8787", token: "from-file", tokenSource: ".dev.vars" });
    expect(at({ HERMES_EDGE_TOKEN: "env" }).token).toBe("env");
    expect(at({ HERMES_EDGE_URL: "https://edge.example.com/" })).toEqual({ baseUrl: "https://edge.example.com", token: undefined, tokenSource: "none" });
  });

  it("uses colour only on a terminal without NO_COLOR", () => {
    expect(styleFor({ isTTY: true }, {}).red("x")).toBe("\x1b[31mx\x1b[39m");
    expect(styleFor({ isTTY: true }, { NO_COLOR: "" }).red("x")).toBe("x");
    expect(styleFor({ isTTY: false }, {}).red("x")).toBe("x");
  });
});
