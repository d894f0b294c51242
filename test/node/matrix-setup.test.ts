import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeHomeserver } from "../support/fake-matrix.ts";
import { serve, type LoopbackServer } from "../support/http.ts";
import { MATRIX_TEST } from "../support/signing.ts";

const hs = new FakeHomeserver();
let server: LoopbackServer;

beforeAll(async () => {
  server = await serve((r) => hs.handle(r));
});
afterAll(() => server.close());
beforeEach(() => hs.reset());

const URL = "https://edge.example.com";

async function run(argv: string[], env: Record<string, string>) {
  const t = memoryIo({ MATRIX_HOMESERVER_URL: server.url, MATRIX_BOT_USER: MATRIX_TEST.bot, ...env });
  const code = await createCli(argv, t.io).run();
  return { code, out: t.out(), err: t.err() };
}

describe("hermes-edge setup matrix", () => {
  it("prints the registration YAML with the Worker's URL, both tokens and an exclusive namespace of the bot, then checks the homeserver", async () => {
    const r = await run(["setup", "matrix", "--url", URL], { MATRIX_AS_TOKEN: MATRIX_TEST.asToken, MATRIX_HS_TOKEN: "hs-secret" });
    expect(r.code).toBe(0);
    for (const line of [
      "id: hermes-edge",
      `url: '${URL}/webhooks/matrix'`,
      `as_token: '${MATRIX_TEST.asToken}'`,
      "hs_token: 'hs-secret'",
      "sender_localpart: 'hermes'",
      "    - exclusive: true",
      "      regex: '^@hermes:example\\.org$'",
      "rate_limited: false",
    ])
      expect(r.out).toContain(line);
    expect(r.out).toContain(`the as_token acts as ${MATRIX_TEST.bot}`);
    expect(r.out).toContain("the homeserver reached the Worker's application service in 12 ms");
    expect(r.out).not.toContain("wrangler secret put");
    expect(hs.calls.map((c) => `${c.method} ${c.path.replace(/\?.*$/, "")}`)).toEqual([
      "GET /_matrix/client/versions",
      "GET /_matrix/client/v3/account/whoami",
      "POST /_matrix/client/v1/appservice/hermes-edge/ping",
    ]);
  });

  it("makes the tokens when unset, says how to store them, and fails the check the homeserver has not loaded yet", async () => {
    const r = await run(["setup", "matrix", "--url", URL], {});
    expect(r.code).toBe(1);
    const made = /as_token: '([A-Za-z0-9_-]{43})'[\s\S]*hs_token: '([A-Za-z0-9_-]{43})'/.exec(r.out);
    expect(made?.[1]).not.toBe(made?.[2]);
    expect(r.out).toContain("npx wrangler secret put MATRIX_AS_TOKEN");
    expect(r.out).toContain("npx wrangler secret put MATRIX_HS_TOKEN");
    expect(r.out).toContain("the homeserver refused the bot");
  });

  it("--json carries the registration and the checks", async () => {
    const r = await run(["setup", "matrix", "--url", URL, "--json"], { MATRIX_AS_TOKEN: MATRIX_TEST.asToken, MATRIX_HS_TOKEN: "hs-secret" });
    const j = JSON.parse(r.out) as { registration: string; made: string[]; bot: { ok: boolean }; ping: { ok: boolean } };
    expect(j.registration).toContain("url: 'https://edge.example.com/webhooks/matrix'");
    expect(j).toMatchObject({ made: [], bot: { ok: true }, ping: { ok: true } });
  });

  it("says what to set when the homeserver or the bot is not set, and when the URL is no homeserver", async () => {
    const t = memoryIo({});
    expect(await createCli(["setup", "matrix", "--url", URL], t.io).run()).not.toBe(0);
    expect(t.err()).toContain("MATRIX_HOMESERVER_URL");
    const r = await run(["setup", "matrix", "--url", URL], { MATRIX_HOMESERVER_URL: `${server.url}/nothing-here` });
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("does not answer as a Matrix homeserver");
  });
});
