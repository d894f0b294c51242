import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNSUPPORTED_NOTE } from "../../workers/platforms/whatsapp/index.ts";
import { WHATSAPP_TEST, whatsappHeaders } from "../support/signing.ts";
import { wa } from "../support/whatsapp-fixtures.ts";
import { deliver, routeOf, settle, toWhatsApp } from "./platform-helpers.ts";
import { llm, whatsapp, whatsappMedia } from "./setup.ts";

const handshake = (query: string) => exports.default.fetch(`http://edge.test/webhooks/whatsapp?${query}`);
const lastUser = () => {
  const msgs = (llm.calls.at(-1)?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
  return JSON.stringify(msgs.filter((m) => m.role === "user").at(-1)?.content ?? "");
};

describe("WhatsApp: the subscription handshake (GET)", () => {
  it("echoes the bare hub.challenge when the verify token matches", async () => {
    const res = await handshake(`hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${WHATSAPP_TEST.verifyToken}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("1158201444");
  });

  it("answers 403 to a wrong, missing or padded token, another mode, or a challenge that is not a plain token", async () => {
    const t = WHATSAPP_TEST.verifyToken;
    const hostile = [
      `hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong`,
      `hub.mode=subscribe&hub.challenge=1`,
      `hub.mode=subscribe&hub.challenge=1&hub.verify_token=${t}%20`,
      `hub.mode=subscribe&hub.challenge=1&hub.verify_token=${t.slice(0, -1)}`,
      `hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=${t}`,
      `hub.mode=subscribe&hub.verify_token=${t}`,
      `hub.mode=subscribe&hub.challenge=%3Cscript%3Ealert(1)%3C%2Fscript%3E&hub.verify_token=${t}`,
      `hub.mode=subscribe&hub.challenge=${"9".repeat(300)}&hub.verify_token=${t}`,
      "",
    ];
    for (const q of hostile) {
      const res = await handshake(q);
      expect(res.status, q).toBe(403);
      expect(await res.text(), q).not.toContain("script");
    }
  });
});

describe("WhatsApp: signed webhooks (POST)", () => {
  it("refuses a missing, malformed or wrong X-Hub-Signature-256 with 401, and a body changed after signing", async () => {
    const body = JSON.stringify(wa.dm("15550001001", "hello"));
    const good = await whatsappHeaders(body);
    const sig = good["x-hub-signature-256"]!;
    const bad = [
      { "content-type": "application/json" },
      { "x-hub-signature-256": "" },
      { "x-hub-signature-256": sig.slice("sha256=".length) },
      { "x-hub-signature-256": `sha1=${sig.slice(7, 47)}` },
      { "x-hub-signature-256": `sha256=${"0".repeat(64)}` },
      { "x-hub-signature-256": `${sig}00` },
      await whatsappHeaders(body, "another-app-secret"),
    ];
    for (const headers of bad) expect((await deliver("whatsapp", body, headers)).status).toBe(401);
    expect((await deliver("whatsapp", body.replace("hello", "hellO"), good)).status).toBe(401);
    await settle();
    expect(llm.calls).toEqual([]);
    expect(whatsapp.calls).toEqual([]);
  });

  it("verifies the raw bytes: escaped non-ASCII text is accepted as signed, and the uppercase hex of the same HMAC too", async () => {
    const body = JSON.stringify(wa.dm("15550001001", "Grüße 👋")).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    const h = await whatsappHeaders(body);
    expect((await deliver("whatsapp", body, { ...h, "x-hub-signature-256": `sha256=${h["x-hub-signature-256"]!.slice(7).toUpperCase()}` })).status).toBe(200);
    await settle();
    expect(whatsapp.texts("15550001001").at(-1)).toBe("echo: Grüße 👋");
  });

  it("answers a DM in the DM, keyed agent:main:whatsapp:dm:<wa_id>, quoting the message, with a read receipt and typing", async () => {
    const payload = wa.dm("15550001001", "hi whatsapp");
    expect((await toWhatsApp(payload)).status).toBe(200);
    await settle();
    const id = (payload.entry[0]!.changes[0]!.value as { messages: Array<{ id: string }> }).messages[0]!.id;
    const sent = whatsapp.sent().at(-1)!;
    expect(sent.body).toMatchObject({
      messaging_product: "whatsapp",
      to: "15550001001",
      type: "text",
      text: { body: "echo: hi whatsapp" },
      context: { message_id: id },
    });
    expect(whatsapp.receipts().map((c) => c.body)).toContainEqual({
      messaging_product: "whatsapp",
      status: "read",
      message_id: id,
      typing_indicator: { type: "text" },
    });
    expect(await routeOf("agent:main:whatsapp:dm:15550001001")).not.toBeNull();
  });

  it("takes every message of a batch (entries × changes × messages) once, and a redelivery of it not again", async () => {
    const a = wa.value("15550001002", [wa.text("15550001002", "one"), wa.text("15550001002", "two")]);
    const b = wa.value("15550001004", [wa.text("15550001004", "three")]);
    const payload = { ...wa.envelope(a), entry: [...wa.envelope(a).entry, ...wa.envelope(b).entry] };
    expect((await toWhatsApp(payload)).status).toBe(200);
    expect((await toWhatsApp(payload)).status).toBe(200);
    await settle();
    expect(llm.calls).toHaveLength(3);
    expect(whatsapp.texts("15550001002")).toEqual(["echo: one", "echo: two"]);
    expect(whatsapp.texts("15550001004")).toEqual(["echo: three"]);
  });

  it("is no turn for statuses, reactions, other fields or an unknown object; 200 and nothing sent", async () => {
    const reaction = wa.message("15550001001", "reaction", { reaction: { message_id: "wamid.x", emoji: "👍" } });
    const bodies = [
      wa.envelope(wa.status("wamid.ours1", "delivered", "15550001001")),
      wa.envelope(wa.status("wamid.ours2", "failed", "15550001001", [{ code: 131047, title: "Re-engagement message" }])),
      wa.envelope(wa.value("15550001001", [reaction])),
      { object: "whatsapp_business_account", entry: [{ id: "1", changes: [{ field: "message_template_status_update", value: { event: "APPROVED" } }] }] },
      { object: "page", entry: [] },
      "not json",
    ];
    for (const b of bodies) expect((await toWhatsApp(b)).status).toBe(200);
    await settle();
    expect(llm.calls).toEqual([]);
    expect(whatsapp.sent()).toEqual([]);
  });

  it("answers an unsupported type with one short note, once per message id, never a 5xx", async () => {
    const poll = wa.envelope(
      wa.value("15550001001", [wa.message("15550001001", "unsupported", { unsupported: { type: "poll_creation" }, errors: [{ code: 131051 }] })]),
    );
    expect((await toWhatsApp(poll)).status).toBe(200);
    expect((await toWhatsApp(poll)).status).toBe(200);
    const odd = wa.envelope(wa.value("15550001001", [wa.message("15550001001", "hologram", { hologram: { id: 1 } })]));
    expect((await toWhatsApp(odd)).status).toBe(200);
    await settle();
    expect(llm.calls).toEqual([]);
    expect(whatsapp.texts("15550001001")).toEqual([UNSUPPORTED_NOTE, UNSUPPORTED_NOTE]);
  });

  it("describes locations and contacts in words, takes button and list replies as their titles, and marks replies", async () => {
    const from = "15550001005";
    const msgs = [
      wa.message(from, "location", { location: { latitude: 52.52, longitude: 13.405, name: "Alexanderplatz", address: "Berlin" } }),
      wa.message(from, "contacts", { contacts: [{ name: { formatted_name: "Ada Lovelace" }, phones: [{ phone: "+44 20 7946 0000" }] }] }),
      wa.message(from, "interactive", { interactive: { type: "button_reply", button_reply: { id: "yes-1", title: "Yes please" } } }),
      wa.message(from, "interactive", { interactive: { type: "list_reply", list_reply: { id: "r2", title: "Second row", description: "desc" } } }),
      wa.text(from, "about that", { context: { from: "15550100001", id: "wamid.earlier" } }),
    ];
    for (const m of msgs) await toWhatsApp(wa.envelope(wa.value(from, [m])));
    await settle();
    const texts = whatsapp.texts(from);
    expect(texts[0]).toContain("Alexanderplatz, Berlin (latitude 52.52, longitude 13.405)");
    expect(texts[1]).toContain("Ada Lovelace (+44 20 7946 0000)");
    expect(texts.slice(2)).toEqual(["echo: Yes please", "echo: Second row", "echo: (a reply to an earlier message) about that"]);
  });

  it("reads an image through GET /{media-id} and its URL, with the token, and refuses one larger than the limit before fetching it", async () => {
    const from = "15550001006";
    whatsappMedia.serve("/img/1.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]), "image/png");
    whatsapp.media.set("990001", { url: "https://media.whatsapp.test/img/1.png", mime_type: "image/png" });
    whatsapp.media.set("990002", { url: "https://media.whatsapp.test/img/huge.png", mime_type: "image/png", file_size: 500 * 1024 * 1024 });
    await toWhatsApp(wa.envelope(wa.value(from, [wa.message(from, "image", { image: { id: "990001", mime_type: "image/png", caption: "what is this?" } })])));
    await settle();
    expect(whatsapp.calls.some((c) => c.method === "GET" && c.path === "/v23.0/990001")).toBe(true);
    expect(whatsappMedia.requests).toEqual([{ path: "/img/1.png", authorization: `Bearer ${WHATSAPP_TEST.token}` }]);
    expect(lastUser()).toContain("what is this?");
    await toWhatsApp(wa.envelope(wa.value(from, [wa.message(from, "document", { document: { id: "990002", mime_type: "image/png", filename: "huge.png" } })])));
    await settle();
    expect(whatsappMedia.requests).toHaveLength(1);
    expect(lastUser()).toContain("huge.png");
  });

  it("refuses a user not in WHATSAPP_ALLOWED_USERS (no turn), at most once per chat", async () => {
    for (const text of ["let me in", "please"]) await toWhatsApp(wa.dm("15550001003", text));
    await settle();
    expect(llm.calls).toEqual([]);
    expect(whatsapp.texts("15550001003")).toHaveLength(1);
    expect(whatsapp.texts("15550001003")[0]).toContain("15550001003");
  });

  it("runs /commands written as text", async () => {
    await toWhatsApp(wa.dm("15550001001", "/whoami"));
    await settle();
    expect(whatsapp.texts("15550001001").at(-1)).toContain("15550001001");
    expect(llm.calls).toEqual([]);
  });

  it("sends a long reply as paragraph-sized messages within 4,096 characters, each once and in order, never editing", async () => {
    const paras = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1}: ${"lorem ipsum ".repeat(70).trim()}.`);
    llm.text(...paras.flatMap((p, i) => [i === 0 ? p : `\n\n${p}`]));
    await toWhatsApp(wa.dm("15550001002", "tell me a lot"));
    await settle();
    const texts = whatsapp.texts("15550001002");
    expect(texts.length).toBeGreaterThan(1);
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(4096);
    expect(texts.join("\n\n")).toBe(paras.join("\n\n"));
    expect(whatsapp.calls.some((c) => c.method !== "POST" && c.method !== "GET")).toBe(false);
  });
});
