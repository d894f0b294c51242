import { beforeEach, describe, expect, it } from "vitest";
import { matrixError } from "../../workers/platforms/matrix/api.ts";
import { matrixText } from "../../workers/platforms/matrix/html.ts";
import { MatrixAdapter } from "../../workers/platforms/matrix/index.ts";
import { parseMatrixTransaction } from "../../workers/platforms/matrix/parse.ts";
import { CONTENT_BYTES, editContent, messageContent } from "../../workers/platforms/matrix/send.ts";
import { verifyMatrix } from "../../workers/platforms/matrix/verify.ts";
import { PlatformApiError, type PlatformEvent } from "../../workers/platforms/types.ts";
import { renderParts } from "../../workers/platforms/parts.ts";
import { MATRIX_RENDER } from "../../workers/platforms/matrix/index.ts";
import { FakeHomeserver } from "../support/fake-matrix.ts";
import { mx } from "../support/matrix-fixtures.ts";
import { MATRIX_TEST } from "../support/signing.ts";

const hs = new FakeHomeserver();
const fetchFake: typeof fetch = async (input, init) => hs.handle(new Request(input, init));
const make = () =>
  new MatrixAdapter({
    homeserverUrl: MATRIX_TEST.homeserver,
    asToken: MATRIX_TEST.asToken,
    hsToken: MATRIX_TEST.hsToken,
    botUser: MATRIX_TEST.bot,
    fetch: fetchFake,
  });
const ALICE = "@alice:example.org";
const ROOM = "!dm:example.org";
const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).byteLength;

beforeEach(() => {
  hs.reset();
  hs.room(ROOM, [ALICE, MATRIX_TEST.bot]);
});

function events(body: string, members: number | null = 2): PlatformEvent[] {
  const got = parseMatrixTransaction(body, MATRIX_TEST.bot, () => members);
  if (got.kind !== "batch") throw new Error(`not a batch: ${got.kind}`);
  return got.events;
}

describe("Matrix: the hs_token check", () => {
  const q = (s = "") => new URLSearchParams(s);
  const h = (auth?: string) => new Headers(auth === undefined ? {} : { authorization: auth });
  it("takes the header, the legacy query, or both when both are the token", async () => {
    const t = MATRIX_TEST.hsToken;
    expect(await verifyMatrix(h(`Bearer ${t}`), q(), t)).toEqual({ ok: true });
    expect(await verifyMatrix(h(`bearer ${t}`), q(), t)).toEqual({ ok: true });
    expect(await verifyMatrix(h(), q(`access_token=${t}`), t)).toEqual({ ok: true });
    expect(await verifyMatrix(h(`Bearer ${t}`), q(`access_token=${t}`), t)).toEqual({ ok: true });
  });

  it("refuses what is missing, wrong, padded, disagreeing, repeated, or checked against an unset token", async () => {
    const t = MATRIX_TEST.hsToken;
    expect(await verifyMatrix(h(), q(), t)).toEqual({ ok: false, reason: "missing" });
    for (const [auth, query, token] of [
      [`Bearer  ${t}`, "", t],
      [`Bearer ${t}\u0000`, "", t],
      [`Token ${t}`, "", t],
      [`Bearer ${t}`, "access_token=other", t],
      ["Bearer other", `access_token=${t}`, t],
      [undefined, `access_token=${t}&access_token=${t}`, t],
      [`Bearer ${"x".repeat(5000)}`, "", t],
      ["Bearer ", "", ""],
      [undefined, "access_token=", ""],
    ] as const) {
      let headers: Headers;
      try {
        headers = h(auth);
      } catch {
        continue; // a header value Headers itself refuses cannot arrive
      }
      expect(await verifyMatrix(headers, q(query), token), `${auth} ${query}`).toEqual({ ok: false, reason: "bad_signature" });
    }
  });
});

describe("Matrix: parsing", () => {
  it("strips a reply's fallback from body and formatted_body, and counts a reply to the bot as addressed in a group", () => {
    const reply = mx.message("!g:example.org", ALICE, `> <${MATRIX_TEST.bot}> an answer\n> more\n\nthanks, and why?`, {
      extra: {
        format: "org.matrix.custom.html",
        formatted_body: `<mx-reply><blockquote><a href="https://matrix.to/#/!g:example.org/$x">In reply to</a> <a href="https://matrix.to/#/${MATRIX_TEST.bot}">Hermes</a><br>an answer</blockquote></mx-reply>thanks, and why?`,
        "m.relates_to": { "m.in_reply_to": { event_id: "$x" } },
      },
    });
    const [e] = events(mx.txn([reply]), 5);
    expect(e).toMatchObject({ kind: "message", text: "thanks, and why?", addressed: true, source: { chatType: "group", threadId: null } });
  });

  it("keys a thread by its root, even a thread reply quoting another message", () => {
    const inThread = mx.message("!g:example.org", ALICE, "in the thread", { mention: true, thread: "$root" });
    const [e] = events(mx.txn([inThread]), 5);
    expect(e?.source).toMatchObject({ chatType: "group", chatId: "!g:example.org", threadId: "$root" });
  });

  it("reads files (caption vs file name, voice), emotes and locations; drops encrypted attachments and unknown types", () => {
    const file = (msgtype: string, extra: Record<string, unknown>) => mx.message(ROOM, ALICE, String(extra.body ?? "f.pdf"), { msgtype, extra });
    const got = events(
      mx.txn([
        file("m.file", { body: "what is this?", filename: "report.pdf", url: "mxc://example.org/abc", info: { mimetype: "application/pdf", size: 12 } }),
        file("m.audio", { body: "voice.ogg", url: "mxc://example.org/v1", info: { mimetype: "audio/ogg", duration: 4200 }, "org.matrix.msc3245.voice": {} }),
        mx.message(ROOM, ALICE, "waves", { msgtype: "m.emote" }),
        mx.message(ROOM, ALICE, "Big Ben", { msgtype: "m.location", extra: { geo_uri: "geo:51.5008,0.1247" } }),
        file("m.image", { body: "secret.png", file: { url: "mxc://example.org/enc" } }),
        file("m.image", { body: "x.png", url: "https://evil.example/x.png" }),
        mx.message(ROOM, ALICE, "?", { msgtype: "m.key.verification.request" }),
      ]),
    );
    expect(got.map((e) => (e.kind === "message" ? [e.text, e.attachments.map((a) => `${a.kind}:${a.name}:${a.ref}`)] : e.kind))).toEqual([
      ["what is this?", ["document:report.pdf:mxc://example.org/abc"]],
      ["", ["voice:voice.ogg:mxc://example.org/v1"]],
      ["* waves", []],
      ["📍 Shared a location: Big Ben (geo:51.5008,0.1247)", []],
    ]);
  });

  it("takes /name and !name commands, and an unknown !word as a message", () => {
    const got = events(
      mx.txn([mx.message(ROOM, ALICE, "/status"), mx.message(ROOM, ALICE, "!new fresh"), mx.message(ROOM, ALICE, "!wow"), mx.message(ROOM, ALICE, "/nope")]),
    );
    expect(got.map((e) => (e.kind === "command" ? `${e.name} ${e.args}` : e.kind))).toEqual(["status ", "new fresh", "message", "unknown_command"]);
  });
});

describe("Matrix: outbound content", () => {
  it("writes the Telegram dialect's entities as HTML, escaping text, and code blocks with their language", () => {
    const [p] = renderParts("**bold** <b>not</b> & [link](https://example.org/?a=1&b=2)\n\n```ts\nconst x = 1 < 2;\n```", MATRIX_RENDER, "final");
    const t = matrixText(p!);
    expect(t.body).toBe("bold <b>not</b> & link\n\nconst x = 1 < 2;");
    expect(t.html).toBe(
      '<strong>bold</strong> &lt;b&gt;not&lt;/b&gt; &amp; <a href="https://example.org/?a=1&amp;b=2">link</a><br><br><pre><code class="language-ts">const x = 1 &lt; 2;</code></pre>',
    );
  });

  it("keeps every event under 65,536 bytes: a part of quotes, emoji and markup is sent without its HTML when that would not fit", () => {
    const nasty = `**${'"\\🎉<&'.repeat(800)}**`;
    for (const part of renderParts(nasty, MATRIX_RENDER, "final")) {
      const fresh = messageContent(part, { roomId: ROOM, threadRoot: "$root", replyTo: "$ev", private: false }, true);
      const edit = editContent(part, "$ev");
      expect(bytes(fresh)).toBeLessThan(CONTENT_BYTES);
      expect(bytes(edit)).toBeLessThan(65_536 - 2048);
    }
  });

  it("relates a thread's parts to its root (the first quoting the message answered) and an edit by m.replace with m.new_content", () => {
    const [p] = renderParts("hello", MATRIX_RENDER, "final");
    const t = { roomId: ROOM, threadRoot: "$root", replyTo: "$ev", private: false };
    expect(messageContent(p!, t, true)["m.relates_to"]).toEqual({
      rel_type: "m.thread",
      event_id: "$root",
      is_falling_back: false,
      "m.in_reply_to": { event_id: "$ev" },
    });
    expect(messageContent(p!, t, false)["m.relates_to"]).toEqual({
      rel_type: "m.thread",
      event_id: "$root",
      is_falling_back: true,
      "m.in_reply_to": { event_id: "$root" },
    });
    expect(editContent(p!, "$mine")).toEqual({
      msgtype: "m.text",
      body: "* hello",
      "m.new_content": { msgtype: "m.text", body: "hello" },
      "m.relates_to": { rel_type: "m.replace", event_id: "$mine" },
    });
  });

  it("sends a retried show under the same transaction ids: the homeserver keeps one message", async () => {
    const adapter = make();
    const [e] = events(mx.txn([mx.message(ROOM, ALICE, "hi")]));
    await adapter.show(e!.target, "the same answer", [], "final");
    await adapter.show(e!.target, "the same answer", [], "final");
    const puts = hs.calls.filter((c) => c.path.includes("/send/"));
    expect(puts).toHaveLength(2);
    expect(puts[0]?.path).toBe(puts[1]?.path);
    expect(hs.replies()).toEqual(["the same answer"]);
  });

  it("maps M_LIMIT_EXCEEDED's retry_after_ms to a retryable error with the wait in seconds, and an unknown token to unauthorized", () => {
    const limited = matrixError(429, { errcode: "M_LIMIT_EXCEEDED", error: "Too many requests", retry_after_ms: 2001 }, null, "send message");
    expect(limited).toBeInstanceOf(PlatformApiError);
    expect({ code: limited.code, retryAfter: limited.retryAfter, retryable: limited.retryable }).toEqual({
      code: "rate_limited",
      retryAfter: 3,
      retryable: true,
    });
    expect(matrixError(429, null, "7", "x").retryAfter).toBe(7);
    expect(matrixError(401, { errcode: "M_UNKNOWN_TOKEN", error: "Unknown token" }, null, "x").code).toBe("unauthorized");
    expect(matrixError(500, "<html>", null, "x")).toMatchObject({ code: "unavailable", retryable: true });
  });
});

describe("Matrix: media and rooms", () => {
  it("downloads mxc:// through authenticated media, and through the legacy endpoint on an older homeserver", async () => {
    const adapter = make();
    hs.media.set("example.org/abc", { bytes: new TextEncoder().encode("%PDF-1.4"), type: "application/pdf" });
    const a = { kind: "document" as const, name: "r.pdf", mime: "application/pdf", size: 8, ref: "mxc://example.org/abc" };
    expect(await adapter.download(a, { maxBytes: 100 })).toMatchObject({ ok: true, mime: "application/pdf" });
    hs.legacyMediaOnly = true;
    expect(await adapter.download(a, { maxBytes: 100 })).toMatchObject({ ok: true });
    expect(hs.calls.map((c) => c.path.replace(/\?.*$/, ""))).toEqual([
      "/_matrix/client/v1/media/download/example.org/abc",
      "/_matrix/client/v1/media/download/example.org/abc",
      "/_matrix/media/v3/download/example.org/abc",
    ]);
    expect(await adapter.download({ ...a, ref: "mxc://example.org/../../admin" }, { maxBytes: 100 })).toMatchObject({ ok: false });
    expect(await adapter.download(a, { maxBytes: 4 })).toMatchObject({ ok: false, reason: "too_large" });
  });

  it("tells a DM from a group by the joined members the homeserver reports, and a handoff destination keys the same", async () => {
    const adapter = make();
    const group = "!g:example.org";
    hs.room(group, [ALICE, "@bob:example.org", "@carol:example.org", MATRIX_TEST.bot]);
    const dm = await adapter.destination(ROOM, null);
    const g = await adapter.destination(group, "$root");
    expect(dm.source).toEqual({ platform: "matrix", chatType: "dm", chatId: ROOM, threadId: null });
    expect(g.source).toEqual({ platform: "matrix", chatType: "group", chatId: group, threadId: "$root" });
    expect(dm.target.private).toBe(true);
  });

  it("makes a handoff thread: a seed message in the room, its event the thread's root, with a matrix.to link", async () => {
    const adapter = make();
    const t = await adapter.createHandoffThread(ROOM, "Planning the trip");
    expect(hs.replies()).toEqual(["🧵 Planning the trip"]);
    expect(t).toMatchObject({ chatId: ROOM, threadId: expect.stringMatching(/^\$/) });
    expect(t?.url).toBe(`https://matrix.to/#/${encodeURIComponent(ROOM)}/${encodeURIComponent(t?.threadId ?? "")}`);
  });
});
