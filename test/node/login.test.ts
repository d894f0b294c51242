import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveTarget } from "../../cli/client.ts";
import { userConfigDir } from "../../cli/io.ts";
import { createCli } from "../../cli/main.ts";
import { configFile } from "../../cli/profiles.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeWorker, printed } from "../support/fake-worker.ts";
import { serve } from "../support/http.ts";

let worker: FakeWorker;
beforeEach(async () => {
  worker = await new FakeWorker().start();
});
afterEach(() => worker.close());

function saved(configDir: string): unknown {
  return JSON.parse(readFileSync(configFile(configDir), "utf8"));
}

describe("hermes-edge login / logout", () => {
  it("checks /health and the token, then saves the profile readable by the user only", async () => {
    const t = memoryIo({ NO_COLOR: "1" });
    expect(await createCli(["login", "--url", `${worker.url}/`, "--token", worker.token], t.io).run()).toBe(0);
    expect(t.out()).toContain(`logged in to ${worker.url} (hermes-edge 9.9.9) as profile 'default'`);
    expect(saved(t.io.configDir)).toEqual({ profiles: { default: { url: worker.url, token: worker.token } } });
    expect(statSync(configFile(t.io.configDir)).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(configFile(t.io.configDir))).mode & 0o777).toBe(0o700);
    // /health first and without the token; then the token on an authenticated route.
    expect(worker.requests.map((r) => [r.line, r.auth])).toEqual([
      ["GET /health", null],
      ["GET /v1/sessions?limit=1", `Bearer ${worker.token}`],
    ]);
    // The saved profile is what later commands use.
    const later = memoryIo({});
    later.io.configDir = t.io.configDir;
    expect(await createCli(["sessions", "list", "--json"], later.io).run()).toBe(0);
    expect(JSON.parse(later.out())).toEqual({ sessions: [] });

    const out = memoryIo({ NO_COLOR: "1" });
    out.io.configDir = t.io.configDir;
    expect(await createCli(["logout"], out.io).run()).toBe(0);
    expect(saved(t.io.configDir)).toEqual({ profiles: {} });
  });

  it("asks for the token on a terminal without echoing it", async () => {
    const t = memoryIo({ NO_COLOR: "1" }, undefined, { tty: true });
    const exit = createCli(["login", "--url", worker.url, "--profile", "work"], t.io).run();
    await printed(t.io.stderr, t.err, "(not shown): ");
    t.stdin.write(`${worker.token}x\x7f\r`);
    expect(await exit).toBe(0);
    expect(t.out() + t.err()).not.toContain(worker.token);
    expect(saved(t.io.configDir)).toEqual({ profiles: { work: { url: worker.url, token: worker.token } } });
  });

  it("refuses, saving nothing: no --token off a terminal, a wrong token, plain http to another host, a server that is not hermes-edge", async () => {
    const cases: Array<[string[], number, string]> = [
      [["--url", worker.url], 2, "no --token given and stdin is not a terminal"],
      [["--url", worker.url, "--token", "nope"], 1, "rejected that token (401); nothing saved"],
      [["--url", "http://edge.example.com", "--token", "t"], 2, "use https://"],
      [["--token", "t"], 2, "login needs the Worker's URL"],
    ];
    const stranger = await serve(() => new Response("hello", { status: 200 }));
    cases.push([["--url", stranger.url, "--token", "t"], 1, `${stranger.url} answers, but not as a hermes-edge Worker`]);
    try {
      for (const [args, code, message] of cases) {
        const t = memoryIo({});
        expect(await createCli(["login", ...args], t.io).run(), message).toBe(code);
        expect(t.err(), message).toContain(message);
        expect(() => statSync(configFile(t.io.configDir)), message).toThrow();
      }
    } finally {
      await stranger.close();
    }
  });

  it("resolves the Worker: environment, then the profile (its token only for its URL), then ./.dev.vars", () => {
    const t = memoryIo({});
    const dir = t.io.home;
    writeFileSync(path.join(dir, ".dev.vars"), "API_TOKEN=local\n");
    mkdirSync(path.dirname(configFile(t.io.configDir)), { recursive: true });
    writeFileSync(
      configFile(t.io.configDir),
      JSON.stringify({ profiles: { default: { url: "https://a.example.com", token: "ta" }, work: { url: "https://b.example.com", token: "tb" } } }),
    );
    const at = (env: Record<string, string>) => resolveTarget({ env, cwd: dir, configDir: t.io.configDir });
    expect(at({})).toEqual({ baseUrl: "https://a.example.com", token: "ta", tokenSource: "profile 'default'" });
    expect(at({ HERMES_EDGE_PROFILE: "work" })).toEqual({ baseUrl: "https://b.example.com", token: "tb", tokenSource: "profile 'work'" });
    expect(at({ HERMES_EDGE_TOKEN: "env" })).toEqual({ baseUrl: "https://a.example.com", token: "env", tokenSource: "HERMES_EDGE_TOKEN" });
    // Another URL never gets the profile's token; a loopback one gets the local token.
    expect(at({ HERMES_EDGE_URL: "https://c.example.com" })).toEqual({ baseUrl: "https://c.example.com", token: undefined, tokenSource: "none" });
    expect(at({ HERMES_EDGE_URL: "http://127.0.0.1:8787" })).toEqual({ baseUrl: "http://127.0.0.1:8787", token: "local", tokenSource: ".dev.vars" });
    expect(() => at({ HERMES_EDGE_PROFILE: "nope" })).toThrow("no such profile");
    expect(userConfigDir({ XDG_CONFIG_HOME: "/x/cfg" }, "/home/u")).toBe("/x/cfg");
    expect(userConfigDir({ XDG_CONFIG_HOME: "relative" }, "/home/u")).toBe("/home/u/.config");
  });
});
