import { beforeAll, describe, expect, it } from "vitest";
import { OUTSIDE_WINDOW } from "../../workers/platforms/whatsapp/window.ts";
import { harness, type Harness } from "../support/e2e.ts";
import { conversation } from "../support/fake-llm.ts";
import { whatsappHeaders } from "../support/signing.ts";
import { wa } from "../support/whatsapp-fixtures.ts";

/** WhatsApp through the e2e Worker: a DM and its reply, then a CLI session handed off into that DM. */
let h: Harness;
const USER = "15550002001";
/** Allowed, but never writes: outside the 24-hour window from the start. */
const SILENT = "15550002009";

beforeAll(async () => {
  h = await harness();
  h.reset();
});

const api = (path: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`${h.worker.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${h.worker.token}`, "content-type": "application/json" },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });

async function dm(from: string, text: string): Promise<Response> {
  const body = JSON.stringify(wa.dm(from, text));
  return fetch(`${h.worker.url}/webhooks/whatsapp`, { method: "POST", headers: await whatsappHeaders(body), body });
}

/** A CLI session with one finished exchange in it. */
async function cliSession(title: string, content: string): Promise<string> {
  const res = await api("/v1/sessions", { method: "POST", json: { title } });
  expect(res.status).toBe(201);
  const id = ((await res.json()) as { session: { id: string } }).session.id;
  const turn = await api(`/v1/sessions/${id}/turns`, { method: "POST", json: { content } });
  expect(turn.status).toBe(200);
  expect(await turn.text()).toContain("event: done");
  return id;
}

/** Requests a handoff of `id` into `waId`'s chat and long-polls (as the CLI does) until it ends. */
async function handOff(id: string, waId: string): Promise<Record<string, unknown>> {
  const res = await api(`/v1/sessions/${id}/handoff`, { method: "POST", json: { platform: "whatsapp", chat_id: waId } });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  let handoff: Record<string, unknown> = { state: "pending" };
  for (const state of ["pending", "running"]) {
    if (handoff.state !== state) continue;
    handoff = ((await (await api(`/v1/sessions/${id}/handoff?wait=30&state=${state}`)).json()) as { handoff: Record<string, unknown> }).handoff;
  }
  return handoff;
}

const sessionOf = async (id: string) => ((await (await api(`/v1/sessions/${id}`)).json()) as { session: Record<string, unknown> }).session;

describe("WhatsApp end to end", () => {
  it("a DM gets its reply; a CLI session handed off inside the 24 h window sends the notice there, and the user's next message continues it", async () => {
    expect((await dm(USER, "hello from whatsapp")).status).toBe(200);
    await h.whatsapp.waitFor(
      (c) => c.body.to === USER && c.body.type === "text" && String((c.body.text as { body: string }).body) === "echo: hello from whatsapp",
    );

    const id = await cliSession("blue door", "remember the blue door");
    const done = await handOff(id, USER);
    expect(done).toMatchObject({ state: "completed", platform: "whatsapp", error: null, destination: { chat_id: USER, thread_id: null } });
    const notice = h.whatsapp.texts(USER).find((t) => t.includes("handed off from the CLI"));
    expect(notice, JSON.stringify(h.whatsapp.texts(USER))).toBeDefined();

    expect((await dm(USER, "and now?")).status).toBe(200);
    await h.whatsapp.waitFor((c) => c.body.to === USER && c.body.type === "text" && String((c.body.text as { body: string }).body) === "echo: and now?");
    // The model saw the CLI session's history: the turn ran in that session.
    expect(conversation(h.llm.calls.at(-1)!.body)[0]!.content).toBe("remember the blue door");
  });

  it("a handoff to a user who never wrote fails with the 24-hour reason before touching the session", async () => {
    const id = await cliSession("silent", "nobody there");
    const before = await sessionOf(id);
    const turns = h.llm.calls.length;
    const sent = h.whatsapp.sent().length;
    const failed = await handOff(id, SILENT);
    expect(failed).toMatchObject({ state: "failed", platform: "whatsapp", error: OUTSIDE_WINDOW });
    expect(h.llm.calls.length).toBe(turns);
    expect(h.whatsapp.sent().length).toBe(sent);
    const after = await sessionOf(id);
    for (const k of ["message_count", "session_key", "chat_id", "thread_id"]) expect(after[k], k).toEqual(before[k]);
  });
});
