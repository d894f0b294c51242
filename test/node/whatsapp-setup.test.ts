import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeWhatsApp } from "../support/fake-whatsapp.ts";
import { serve, type LoopbackServer } from "../support/http.ts";
import { WHATSAPP_TEST } from "../support/signing.ts";

const graph = new FakeWhatsApp();
let server: LoopbackServer;

beforeAll(async () => {
  server = await serve((r) => graph.handle(r));
});
afterAll(() => server.close());
beforeEach(() => graph.reset());

const URL = "https://edge.example.com";
const SETTINGS = { WHATSAPP_ACCESS_TOKEN: WHATSAPP_TEST.token, WHATSAPP_PHONE_NUMBER_ID: WHATSAPP_TEST.phoneNumberId, WHATSAPP_VERIFY_TOKEN: "paste-me" };

async function run(argv: string[], env: Record<string, string>) {
  const t = memoryIo({ WHATSAPP_API_BASE: `${server.url}/v23.0`, ...env });
  const code = await createCli(argv, t.io).run();
  return { code, out: t.out(), err: t.err() };
}

describe("hermes-edge setup whatsapp", () => {
  it("checks the token and number, subscribes the app to the business account, and prints the callback URL and verify token", async () => {
    const r = await run(["setup", "whatsapp", "--url", URL], { ...SETTINGS, WHATSAPP_BUSINESS_ACCOUNT_ID: WHATSAPP_TEST.waba });
    expect(r.code).toBe(0);
    expect(r.out).toContain("+1 555-010-0001 (Hermes Test): the token and number work; quality GREEN");
    expect(r.out).toContain(`the app is subscribed to business account ${WHATSAPP_TEST.waba}'s webhooks`);
    expect(r.out).toContain(`Callback URL:  ${URL}/webhooks/whatsapp`);
    expect(r.out).toContain("Verify token:  paste-me");
    expect(graph.calls.map((c) => `${c.method} ${c.path.replace(/\?.*$/, "")}`)).toEqual([
      `GET /v23.0/${WHATSAPP_TEST.phoneNumberId}`,
      `POST /v23.0/${WHATSAPP_TEST.waba}/subscribed_apps`,
    ]);
  });

  it("without WHATSAPP_BUSINESS_ACCOUNT_ID it subscribes nothing, and says so; --json has the same facts", async () => {
    const r = await run(["setup", "whatsapp", "--url", URL, "--json"], SETTINGS);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      subscribed: null,
      callbackUrl: `${URL}/webhooks/whatsapp`,
      verifyToken: "paste-me",
      number: { qualityRating: "GREEN" },
    });
    expect(graph.calls.filter((c) => c.method === "POST")).toEqual([]);
  });

  it("names every missing setting, and says what Meta answered to a wrong token", async () => {
    const none = await run(["setup", "whatsapp", "--url", URL], {});
    expect(none.code).toBe(1);
    for (const name of ["WHATSAPP_ACCESS_TOKEN", "WHATSAPP_PHONE_NUMBER_ID", "WHATSAPP_VERIFY_TOKEN"]) expect(none.err).toContain(name);
    const bad = await run(["setup", "whatsapp", "--url", URL], { ...SETTINGS, WHATSAPP_ACCESS_TOKEN: "wrong" });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("Meta refused the phone number lookup: WhatsApp phone number lookup: Invalid OAuth access token. (code 190)");
  });
});
