import { describe, expect, it } from "vitest";
import { wa } from "../support/whatsapp-fixtures.ts";
import { call } from "./helpers.ts";
import { routeOf, settle, toWhatsApp } from "./platform-helpers.ts";
import { whatsapp } from "./setup.ts";

const REFUSED = [{ code: 131026, title: "Message undeliverable", message: "Message undeliverable" }];

interface ApiMessage {
  role: string;
  content: string | null;
  undelivered?: string;
}

async function transcript(sessionId: string): Promise<ApiMessage[]> {
  const res = await call(`/v1/sessions/${sessionId}/messages`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: ApiMessage[] }).messages;
}

async function answeredDm(USER: string): Promise<{ sessionId: string; wamid: string }> {
  expect((await toWhatsApp(wa.dm(USER, "hello there"))).status).toBe(200);
  await settle();
  expect(whatsapp.texts(USER)).toEqual(["echo: hello there"]);
  const sessionId = await routeOf(`agent:main:whatsapp:dm:${USER}`);
  const wamid = whatsapp.wamids.find((w) => w.to === USER)?.id;
  if (!sessionId || !wamid) throw new Error("the DM got no session or no reply");
  return { sessionId, wamid };
}

describe("WhatsApp: a failed status for one of the bot's messages", () => {
  it("marks the reply it showed undelivered in GET /v1/sessions/:id/messages, with Meta's reason", async () => {
    const USER = "15550001005";
    const { sessionId, wamid } = await answeredDm(USER);
    expect((await transcript(sessionId)).some((m) => m.undelivered !== undefined)).toBe(false);
    expect((await toWhatsApp(wa.envelope(wa.status(wamid, "failed", USER, REFUSED)))).status).toBe(200);
    await settle();
    const reply = (await transcript(sessionId)).filter((m) => m.role === "assistant").at(-1);
    expect(reply).toMatchObject({ content: "echo: hello there", undelivered: "131026 Message undeliverable" });
    expect(whatsapp.texts(USER)).toEqual(["echo: hello there"]);
  });

  it("changes nothing for an unknown message id, or a delivered status of the reply, and answers 200", async () => {
    const USER = "15550001006";
    const { sessionId, wamid } = await answeredDm(USER);
    const before = await transcript(sessionId);
    const bodies = [
      wa.status("wamid.notours", "failed", USER, REFUSED),
      wa.status(wamid, "delivered", USER),
      wa.status(wamid, "failed", "15550009999", REFUSED),
    ];
    for (const b of bodies) expect((await toWhatsApp(wa.envelope(b))).status).toBe(200);
    await settle();
    expect(await transcript(sessionId)).toEqual(before);
    expect(before.some((m) => m.undelivered !== undefined)).toBe(false);
  });
});
