import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OUTSIDE_WINDOW, WINDOW_MS } from "../../workers/platforms/whatsapp/index.ts";
import { wa } from "../support/whatsapp-fixtures.ts";
import { call, newSession, postTurn, readEvents } from "./helpers.ts";
import { routeOf, settle, toWhatsApp } from "./platform-helpers.ts";
import { llm, whatsapp } from "./setup.ts";

/** A CLI session with one exchange in it. */
async function cliSession(title: string): Promise<string> {
  const id = await newSession(title);
  await readEvents(await postTurn(id, "remember the blue door"));
  return id;
}

/** Hands `id` off into the WhatsApp chat of `waId` and waits (long-poll, as the CLI does) until it ends. */
async function handOff(id: string, waId: string): Promise<Record<string, unknown>> {
  const res = await call(`/v1/sessions/${id}/handoff`, { method: "POST", json: { platform: "whatsapp", chat_id: waId } });
  expect(res.status).toBeLessThan(300);
  let h: Record<string, unknown> = { state: "pending" };
  for (const state of ["pending", "running"]) {
    if (h.state !== state) continue;
    h = ((await (await call(`/v1/sessions/${id}/handoff?wait=30&state=${state}`)).json()) as { handoff: Record<string, unknown> }).handoff;
  }
  return h;
}

const key = (waId: string) => `agent:main:whatsapp:dm:${waId}`;

describe("handoff into WhatsApp, inside and outside its 24-hour window", () => {
  it("inside the window (the user wrote an hour ago or less): the DM takes the session over and gets the summary", async () => {
    await toWhatsApp(wa.dm("15550001005", "hello bot"));
    await settle();
    whatsapp.reset();
    const id = await cliSession("blue door");
    const h = await handOff(id, "15550001005");
    expect(h).toMatchObject({ state: "completed", platform: "whatsapp", error: null, destination: { chat_id: "15550001005", thread_id: null } });
    expect(await routeOf(key("15550001005"))).toBe(id);
    expect(whatsapp.sent().at(-1)!.body).toMatchObject({ to: "15550001005", type: "text" });
    // The user's next message continues the CLI session.
    await toWhatsApp(wa.dm("15550001005", "and now?"));
    await settle();
    expect(await routeOf(key("15550001005"))).toBe(id);
  });

  it("outside the window with no template: fails with the reason before touching the session (no binding, no turn, nothing sent)", async () => {
    // A number no test writes from (the runtime's storage is shared with the other files).
    const id = await cliSession("never wrote");
    const turns = llm.calls.length;
    const h = await handOff(id, "15550009006");
    expect(h).toMatchObject({ state: "failed", error: OUTSIDE_WINDOW });
    expect(await routeOf(key("15550009006"))).toBeNull();
    expect(llm.calls.length).toBe(turns);
    expect(whatsapp.sent()).toEqual([]);
  });

  it("a user whose last message is more than 24 h old is outside it too", async () => {
    await toWhatsApp(wa.dm("15550001009", "long ago"));
    await settle();
    const inbox = env.INBOX.getByName(key("15550001009"));
    await runInDurableObject(inbox, (_o, state) => {
      state.storage.sql.exec("UPDATE meta SET v = ? WHERE k = 'last_inbound_at'", String(Date.now() - WINDOW_MS - 60_000));
    });
    // Evicted, the object reads the moved time again (its store caches what it read).
    await evictDurableObject(inbox);
    const id = await cliSession("stale window");
    const before = await routeOf(key("15550001009"));
    whatsapp.reset();
    const h = await handOff(id, "15550001009");
    expect(h).toMatchObject({ state: "failed", error: OUTSIDE_WINDOW });
    expect(await routeOf(key("15550001009"))).toBe(before);
    expect(whatsapp.sent()).toEqual([]);
  });
});
