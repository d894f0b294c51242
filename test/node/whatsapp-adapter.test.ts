import { describe, expect, it } from "vitest";
import { renderMessage } from "../../workers/format/index.ts";
import { PlatformApiError } from "../../workers/platforms/types.ts";
import { graphError } from "../../workers/platforms/whatsapp/api.ts";
import { handoffWindow, OUTSIDE_WINDOW, WINDOW_MS } from "../../workers/platforms/whatsapp/window.ts";
import { parseWhatsAppBody, verifyWhatsApp, WhatsAppAdapter, whatsappHandshake, whatsappTarget } from "../../workers/platforms/whatsapp/index.ts";
import { WHATSAPP_TEST, whatsappHeaders } from "../support/signing.ts";
import { wa } from "../support/whatsapp-fixtures.ts";

const md = (text: string) => renderMessage(text, "whatsapp", { limit: 4096, unit: "utf16" }).map((p) => p.text);

describe("WhatsApp formatting (the one Markdown renderer's whatsapp dialect)", () => {
  it("writes *bold*, _italic_, ~strike~, inline and block monospace, lists and quotes", () => {
    expect(md("**bold**, *italic*, ~~gone~~ and `code`")).toEqual(["*bold*, _italic_, ~gone~ and `code`"]);
    expect(md("# Title\n\n- one\n- two\n\n> quoted\n\n```js\nlet a = 1;\n```")).toEqual(["*Title*\n\n• one\n• two\n\n> quoted\n\n```\nlet a = 1;\n```"]);
  });

  it("writes links as label and URL (WhatsApp has no masked links), and keeps literal markers literal", () => {
    expect(md("see [the docs](https://example.com/a) or https://example.com/b")).toEqual(["see the docs (https://example.com/a) or https://example.com/b"]);
    expect(md("2 \\* 3 and snake\\_case")[0]).toBe("2 *\u200b 3 and snake_\u200bcase");
  });

  it("splits a long reply at paragraph boundaries within 4096 characters", () => {
    const para = "word ".repeat(150).trim();
    const parts = md(Array.from({ length: 12 }, () => para).join("\n\n"));
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(4096);
      expect(p.startsWith("word") && p.endsWith("word")).toBe(true);
    }
  });
});

describe("WhatsApp verification, hostile input", () => {
  const body = JSON.stringify(wa.dm("15550001001", "hi"));
  const bytes = new TextEncoder().encode(body);

  it("accepts Meta's signature over the exact bytes, and nothing else", async () => {
    const h = new Headers(await whatsappHeaders(body));
    expect(await verifyWhatsApp(h, bytes, WHATSAPP_TEST.appSecret)).toEqual({ ok: true });
    const sig = h.get("x-hub-signature-256")!;
    const variants = [
      "",
      "sha256=",
      `${sig} `.repeat(2),
      sig.replace("sha256=", "sha256:"),
      `sha256=${"g".repeat(64)}`,
      `sha256=${sig.slice(7, 70)}`,
      `sha512=${sig.slice(7)}`,
      "x".repeat(10_000),
    ];
    for (const v of variants)
      expect((await verifyWhatsApp(new Headers({ "x-hub-signature-256": v }), bytes, WHATSAPP_TEST.appSecret)).ok, v.slice(0, 20)).toBe(false);
    expect(await verifyWhatsApp(new Headers(), bytes, WHATSAPP_TEST.appSecret)).toEqual({ ok: false, reason: "missing" });
    const flipped = bytes.slice();
    flipped[flipped.length - 2] = (flipped[flipped.length - 2] ?? 0) ^ 1;
    expect(await verifyWhatsApp(h, flipped, WHATSAPP_TEST.appSecret)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("answers the handshake only for the right token, with the bare challenge", async () => {
    const q = (t: string) => new URLSearchParams({ "hub.mode": "subscribe", "hub.challenge": "1158201444", "hub.verify_token": t });
    const ok = await whatsappHandshake(q(WHATSAPP_TEST.verifyToken), WHATSAPP_TEST.verifyToken);
    expect([ok.status, await ok.text()]).toEqual([200, "1158201444"]);
    for (const t of ["", WHATSAPP_TEST.verifyToken.toUpperCase(), `${WHATSAPP_TEST.verifyToken}\u0000`])
      expect((await whatsappHandshake(q(t), WHATSAPP_TEST.verifyToken)).status).toBe(403);
  });
});

describe("WhatsApp parsing", () => {
  it("keys a DM agent:main:whatsapp:dm:<wa_id>, names the sender, and answers in that chat", () => {
    const ingest = parseWhatsAppBody(JSON.stringify(wa.dm("16505551234", "hello")));
    expect(ingest.kind).toBe("batch");
    const [event] = ingest.kind === "batch" ? ingest.events : [];
    expect(event?.source).toEqual({ platform: "whatsapp", chatType: "dm", chatId: "16505551234", userId: "16505551234", userName: "Test User" });
  });

  it("keeps the good messages of a batch when one of them does not match the schema", () => {
    const bad = { id: 5, type: "text" };
    const ingest = parseWhatsAppBody(JSON.stringify(wa.envelope(wa.value("1", [bad, wa.text("1", "fine")]))));
    expect(ingest.kind === "batch" && ingest.events.map((e) => (e.kind === "message" ? e.text : e.kind))).toEqual(["fine"]);
    expect(ingest.kind === "batch" && ingest.malformed).toMatch(/^unexpected message at id: /);
  });

  it("logs a failed status of one of our messages and keeps it as a delivery failure to that user, and takes no turn from statuses", () => {
    const ingest = parseWhatsAppBody(
      JSON.stringify(wa.envelope(wa.status("wamid.1", "failed", "1", [{ code: 131047, title: "Re-engagement message" }]), wa.status("wamid.1", "read", "1"))),
    );
    expect(ingest).toEqual({
      kind: "batch",
      events: [],
      notes: [],
      failures: [
        {
          source: { platform: "whatsapp", chatType: "dm", chatId: "1", userId: "1", userName: null },
          messageRef: "wamid.1",
          reason: "131047 Re-engagement message",
        },
      ],
      log: ["message wamid.1 to 1 failed: 131047 Re-engagement message"],
    });
  });
});

describe("WhatsApp Graph API errors", () => {
  it("maps 429 and Meta's rate-limit codes to rate_limited with a retry time, 131047 to outside_window, 190 to unauthorized", () => {
    const e = (status: number, code: number, retry: string | null = null) => graphError(status, { error: { message: "m", code } }, retry, "send");
    expect([e(429, 0, "7").code, e(429, 0, "7").retryAfter]).toEqual(["rate_limited", 7]);
    for (const code of [4, 80007, 130429, 131048, 131056]) expect([e(400, code).code, e(400, code).retryAfter]).toEqual(["rate_limited", 60]);
    expect(e(400, 131047).code).toBe("outside_window");
    expect(e(401, 190).code).toBe("unauthorized");
    expect(e(400, 100).code).toBe("rejected");
    expect(e(400, 100)).toBeInstanceOf(PlatformApiError);
  });

  it("sends the typing indicator with the read receipt at most every 20 s per message (it lasts 25 s)", async () => {
    let now = 0;
    const calls: unknown[] = [];
    const fetchFake: typeof fetch = async (_url, init) => (calls.push(JSON.parse(String(init?.body))), Response.json({ success: true }));
    const a = new WhatsAppAdapter({
      accessToken: "t",
      appSecret: "s",
      verifyToken: "v",
      phoneNumberId: "1",
      apiBase: "https://graph.example/v23.0",
      fetch: fetchFake,
      now: () => now,
    });
    const target = whatsappTarget("16505551234", "wamid.typing1");
    for (const at of [0, 4_000, 19_999, 20_000, 24_000, 40_000]) {
      now = at;
      await a.typing(target);
    }
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual({ messaging_product: "whatsapp", status: "read", message_id: "wamid.typing1", typing_indicator: { type: "text" } });
  });
});

describe("WhatsApp's 24-hour rule for handoffs", () => {
  const now = 1_800_000_000_000;
  const setup = (answer: () => Response) => {
    const sent: Array<Record<string, unknown>> = [];
    const fetchFake: typeof fetch = async (_url, init) => (sent.push(JSON.parse(String(init?.body)) as Record<string, unknown>), answer());
    return { sent, g: { apiBase: "https://graph.example/v23.0", accessToken: "t", fetch: fetchFake } };
  };

  it("inside the window: goes on, nothing sent", async () => {
    const { sent, g } = setup(() => Response.json({}));
    expect(await handoffWindow(g, { phoneNumberId: "1", template: "handoff", now }, "16505551234", "Trip", now - WINDOW_MS + 1)).toEqual({ ok: true });
    expect(sent).toEqual([]);
  });

  it("outside it (or never written) without a template: refused with the reason, nothing sent", async () => {
    const { sent, g } = setup(() => Response.json({}));
    for (const last of [null, now - WINDOW_MS])
      expect(await handoffWindow(g, { phoneNumberId: "1", template: null, now }, "16505551234", "Trip", last)).toEqual({ ok: false, reason: OUTSIDE_WINDOW });
    expect(sent).toEqual([]);
  });

  it("outside it with WHATSAPP_HANDOFF_TEMPLATE: sends the template with the session title, and that is the notice", async () => {
    const { sent, g } = setup(() => Response.json({ messages: [{ id: "wamid.t" }] }));
    expect(await handoffWindow(g, { phoneNumberId: "1", template: "session_handoff:de", now }, "16505551234", "Reise nach Rom", null)).toEqual({
      ok: true,
      announced: true,
    });
    expect(sent).toEqual([
      {
        messaging_product: "whatsapp",
        recipient_type: "individual",
        to: "16505551234",
        type: "template",
        template: { name: "session_handoff", language: { code: "de" }, components: [{ type: "body", parameters: [{ type: "text", text: "Reise nach Rom" }] }] },
      },
    ]);
  });

  it("a refused template fails the handoff with Meta's reason", async () => {
    const { g } = setup(() => Response.json({ error: { message: "Template name does not exist in the translation", code: 132001 } }, { status: 404 }));
    const r = await handoffWindow(g, { phoneNumberId: "1", template: "nope", now }, "16505551234", "Trip", null);
    expect(r.ok === false && r.reason).toMatch(/handoff template nope was refused: WhatsApp handoff template: Template name does not exist/);
  });
});

describe("WhatsApp replies without edits", () => {
  const rig = () => {
    const bodies: string[] = [];
    let n = 0;
    const fetchFake: typeof fetch = async (_url, init) => {
      const body = JSON.parse(String(init?.body)) as { text?: { body: string } };
      if (body.text) bodies.push(body.text.body);
      return Response.json({ messages: [{ id: `wamid.p${++n}` }] });
    };
    const a = new WhatsAppAdapter({
      accessToken: "t",
      appSecret: "s",
      verifyToken: "v",
      phoneNumberId: "1",
      apiBase: "https://graph.example/v23.0",
      fetch: fetchFake,
    });
    return { a, bodies, target: whatsappTarget("16505551234", "wamid.q") };
  };

  it("posts only what the messages it already sent do not show, and the final delivery the rest", async () => {
    const { a, bodies, target } = rig();
    const first = await a.show(target, "One.", [], "live");
    const second = await a.show(target, "One.\n\nTwo.", first.ids, "live");
    const final = await a.show(target, "One.\n\nTwo.\n\nThree **end**.", second.ids, "final");
    expect(bodies).toEqual(["One.", "Two.", "Three *end*."]);
    expect(final.ids).toHaveLength(3);
    // A re-run of the delivery (the same ids) posts nothing again.
    expect((await a.show(target, "One.\n\nTwo.\n\nThree **end**.", final.ids, "final")).ids).toEqual(final.ids);
    expect(bodies).toHaveLength(3);
  });

  it("posts the whole reply again when it no longer starts with what was posted (a repeat, never a loss)", async () => {
    const { a, bodies, target } = rig();
    const first = await a.show(target, "Draft.", [], "live");
    await a.show(target, "Something else entirely.", first.ids, "final");
    expect(bodies).toEqual(["Draft.", "Something else entirely."]);
  });
});
