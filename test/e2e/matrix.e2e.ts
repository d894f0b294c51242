import { beforeAll, describe, expect, it } from "vitest";
import { harness, type Harness } from "../support/e2e.ts";
import { conversation } from "../support/fake-llm.ts";
import type { ApiCall } from "../support/fake-platforms.ts";
import { mx } from "../support/matrix-fixtures.ts";
import { MATRIX_TEST, matrixHeaders } from "../support/signing.ts";

/** Matrix through the e2e Worker: a DM answered, /sethome in a room, a CLI session handed off into a thread there and continued in it. */
let h: Harness;
const ALICE = "@alice:example.org";
const BOB = "@bob:example.org";
const DM = "!e2e-dm:example.org";
const HOME = "!e2e-home:example.org";
let txn = 0;

beforeAll(async () => {
  h = await harness();
  h.reset();
  h.matrix.room(DM, [ALICE, MATRIX_TEST.bot]);
  h.matrix.room(HOME, [ALICE, BOB, "@carol:example.org", MATRIX_TEST.bot]);
});

const api = (path: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`${h.worker.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${h.worker.token}`, "content-type": "application/json" },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });

/** The homeserver pushes a transaction to the registered URL. */
const push = (events: Record<string, unknown>[]) =>
  fetch(`${h.worker.url}/webhooks/matrix/_matrix/app/v1/transactions/e2e-${Date.now()}-${++txn}`, {
    method: "PUT",
    headers: matrixHeaders(),
    body: mx.txn(events),
  });

const body = (c: ApiCall) => String(((c.body["m.new_content"] as { body?: unknown } | undefined) ?? c.body).body);
const sentTo = (room: string, text: string) => (c: ApiCall) => c.method === "PUT" && c.path.includes(encodeURIComponent(room)) && body(c) === text;

describe("Matrix end to end", () => {
  it("a DM gets its reply; /sethome makes a room home; a CLI session handed off lands in a thread there, keyed as a real message in it", async () => {
    const res = await push([mx.message(DM, ALICE, "hello from matrix")]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    await h.matrix.waitFor(sentTo(DM, "echo: hello from matrix"));

    expect((await push([mx.message(HOME, ALICE, "/sethome")])).status).toBe(200);
    await h.matrix.waitFor((c) => c.method === "PUT" && c.path.includes(encodeURIComponent(HOME)) && /home/i.test(body(c)));

    const created = await api("/v1/sessions", { method: "POST", json: { title: "green gate" } });
    const id = ((await created.json()) as { session: { id: string } }).session.id;
    expect(await (await api(`/v1/sessions/${id}/turns`, { method: "POST", json: { content: "remember the green gate" } })).text()).toContain("event: done");
    const asked = await api(`/v1/sessions/${id}/handoff`, { method: "POST", json: { platform: "matrix" } });
    expect(asked.status, await asked.clone().text()).toBe(202);
    let handoff: Record<string, unknown> = { state: "pending" };
    for (const state of ["pending", "running"]) {
      if (handoff.state !== state) continue;
      handoff = ((await (await api(`/v1/sessions/${id}/handoff?wait=30&state=${state}`)).json()) as { handoff: Record<string, unknown> }).handoff;
    }
    expect(handoff).toMatchObject({ state: "completed", platform: "matrix", error: null, destination: { chat_id: HOME } });
    const root = String((handoff.destination as { thread_id: string }).thread_id);
    // The seed in the home room is the thread's root; the notice goes into the thread.
    const seed = h.matrix.sent().find((c) => (c.answer as { event_id?: string }).event_id === root);
    expect(seed && body(seed)).toBe("🧵 Handoff: green gate");
    await h.matrix.waitFor((c) => (c.body["m.relates_to"] as { rel_type?: string; event_id?: string } | undefined)?.event_id === root);

    // Bob writes in the thread without mentioning the bot: the thread is the session's now.
    expect((await push([mx.message(HOME, BOB, "and the gate?", { thread: root })])).status).toBe(200);
    const reply = await h.matrix.waitFor(sentTo(HOME, "echo: and the gate?"));
    expect(reply.body["m.relates_to"]).toMatchObject({ rel_type: "m.thread", event_id: root });
    expect(conversation(h.llm.calls.at(-1)!.body)[0]!.content).toBe("remember the green gate");
  });
});
