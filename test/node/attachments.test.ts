import { describe, expect, it } from "vitest";
import { OfflineModel, OpenAiModel, offlineReply, type ChatMessage } from "../../workers/agent/index.ts";
import {
  INLINE_TEXT_CHARS,
  readAttachments,
  transcribe,
  withAttachments,
  type AttachmentIn,
  type Download,
  type ReadDeps,
} from "../../workers/attachments/index.ts";
import { fetchCapped } from "../../workers/platforms/files.ts";
import { checkMediaLink, gatewayOfMediaKey, mediaLink } from "../../workers/relay/media.ts";
import { FakeLlm, imagesOf } from "../support/fake-llm.ts";
import { dataUrl, PNG, pdfWithText } from "../support/files.ts";

const file = (over: Partial<AttachmentIn>): AttachmentIn => ({ kind: "document", name: null, mime: null, size: null, ref: "r", ...over });

/** Downloads served from a table of refs; everything else fails. */
function deps(files: Record<string, Uint8Array | string>, extra: Partial<ReadDeps> = {}): ReadDeps & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    maxBytes: 1024 * 1024,
    async download(a): Promise<Download> {
      asked.push(a.ref);
      const f = files[a.ref];
      if (f === undefined) return { ok: false, reason: "failed", detail: "the platform said no" };
      return { ok: true, bytes: typeof f === "string" ? new TextEncoder().encode(f) : f, mime: null };
    },
    ...extra,
  };
}

const read = (items: AttachmentIn[], d: ReadDeps) => readAttachments(items, d, new AbortController().signal);

describe("reading attachments", () => {
  it("keeps the order of the files in the notes, and one failure does not stop the rest", async () => {
    const got = await read(
      [file({ ref: "a", name: "a.txt", mime: "text/plain" }), file({ ref: "missing", name: "b.txt" }), file({ ref: "c", kind: "image" })],
      deps({ a: "alpha", c: PNG }),
    );
    expect(got.records.map((r) => r.status)).toEqual(["inlined", "failed", "image"]);
    expect(got.text.split("\n[").map((l) => l.slice(0, 20))).toEqual(["[document a.txt (tex", "document b.txt: it c", "image (image/png, 70"]);
    expect(got.images).toEqual([{ type: "image_url", image_url: { url: dataUrl("image/png", PNG) } }]);
  });

  it("shows only what really is an image: an HTML page sent as a photo is described, not shown", async () => {
    const got = await read([file({ ref: "x", kind: "image", mime: "image/jpeg" })], deps({ x: "<html>not a picture</html>" }));
    expect(got.images).toEqual([]);
    expect(got.records[0]!.status).toBe("described");
  });

  it("inlines documents up to the message's budget, and says where it cut", async () => {
    const big = "x".repeat(INLINE_TEXT_CHARS + 500);
    const got = await read([file({ ref: "big", name: "big.log" }), file({ ref: "small", name: "small.md" })], deps({ big, small: "never shown" }));
    expect(got.records.map((r) => r.status)).toEqual(["inlined", "described"]);
    expect(got.text).toContain("[… cut here: 500 more characters were not included]");
    expect(got.text).not.toContain("never shown");
  });

  it("a document full of backticks cannot close its fence early", async () => {
    const got = await read([file({ ref: "md", name: "fences.md" })], deps({ md: "before\n```\nafter" }));
    expect(got.text).toContain("````\nbefore\n```\nafter\n````");
  });

  it("reads the text layer of a PDF", async () => {
    const got = await read([file({ ref: "pdf", name: "report.pdf", mime: "application/pdf" })], deps({ pdf: pdfWithText("Quarterly report: revenue up") }));
    expect(got.records[0]!.status).toBe("inlined");
    expect(got.text).toContain("Quarterly report: revenue up");
  });

  it("describes a file over the cap without downloading it", async () => {
    const d = deps({ huge: "never" });
    const got = await read([file({ ref: "huge", name: "huge.bin", size: 2 * 1024 * 1024 })], d);
    expect(d.asked).toEqual([]);
    expect(got.records[0]!.status).toBe("too_large");
  });

  it("transcribes voice notes when it can, and says so when transcription fails", async () => {
    const voice = file({ ref: "v", kind: "voice", mime: "audio/ogg", seconds: 3 });
    const heard = await read([voice], deps({ v: "OggS" }, { transcribe: async () => "meet at noon" }));
    expect(heard.text).toBe('[voice note (3 s, audio/ogg, 4 B), transcribed: "meet at noon"]');
    const failed = await read([voice], deps({ v: "OggS" }, { transcribe: async () => Promise.reject(new Error("HTTP 500")) }));
    expect(failed.records[0]).toMatchObject({ status: "failed", detail: "HTTP 500" });
    expect(failed.text).toContain("so what was said is not known");
  });
});

describe("the model is shown what came with the message", () => {
  const got = {
    text: "[image (image/png, 70 B): the image is attached]",
    images: [{ type: "image_url" as const, image_url: { url: dataUrl("image/png", PNG) } }],
    records: [
      {
        index: 0,
        kind: "image" as const,
        name: null,
        mime: "image/png",
        size: 70,
        seconds: null,
        status: "image" as const,
        key: null,
        detail: null,
        note: "[image (image/png, 70 B): the image is attached]",
      },
    ],
  };
  const history: ChatMessage[] = [
    { role: "user", content: "earlier" },
    { role: "assistant", content: "ok" },
    { role: "user", content: `what is this?\n\n${got.text}` },
  ];

  it("sends the images as image_url content parts of the last user message only", async () => {
    const llm = new FakeLlm();
    const model = withAttachments(
      new OpenAiModel({ baseUrl: "https://llm.example/v1", model: "m", fetch: (i, init) => llm.handle(new Request(i, init)) }),
      got,
    );
    await model.complete({ messages: history });
    const sent = llm.calls[0]!.body.messages;
    expect(sent.map((m) => typeof m.content)).toEqual(["string", "string", "object"]);
    expect(sent[2]!.content).toEqual([{ type: "text", text: history[2]!.content }, ...got.images]);
    expect(imagesOf(sent[2]!.content)).toHaveLength(1);
  });

  it("the offline model acknowledges what it was sent, and what the words were", async () => {
    const res = await withAttachments(new OfflineModel({ delayMs: 0 }), got).complete({ messages: history });
    expect(res.content).toContain("You sent a file: image (image/png, 70 B), I cannot see images.");
    expect(res.content).toContain('You said: "what is this?"');
    expect(offlineReply(history)).toContain('You said: "what is this? [image');
  });
});

describe("speech to text", () => {
  it("posts the audio and the model as multipart to /audio/transcriptions, with the key", async () => {
    const llm = new FakeLlm();
    llm.transcript = "hello";
    const text = await transcribe(
      { baseUrl: "https://llm.example/v1/", model: "whisper-1", apiKey: "sk" },
      { bytes: new Uint8Array([1, 2, 3]), mime: "audio/ogg", name: null },
      { fetch: (i, init) => llm.handle(new Request(i, init)) },
    );
    expect(text).toBe("hello");
    expect(llm.transcriptions).toEqual([{ model: "whisper-1", fileName: "voice.ogg", type: "audio/ogg", bytes: 3, authorization: "Bearer sk" }]);
  });
});

describe("capped downloads", () => {
  const stream = (chunks: number, size: number) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < chunks; i++) c.enqueue(new Uint8Array(size));
        c.close();
      },
    });

  it("stops a download as soon as it passes the cap, with or without a Content-Length", async () => {
    const noLength = await fetchCapped(async () => new Response(stream(5, 400)), "https://files.example/secret-token/f", {}, 1000, "the file server");
    expect(noLength).toEqual({ ok: false, reason: "too_large", detail: "over 1000 bytes" });
    const declared = await fetchCapped(
      async () => new Response("x", { headers: { "content-length": "5000" } }),
      "https://files.example/f",
      {},
      1000,
      "the file server",
    );
    expect(declared).toMatchObject({ ok: false, reason: "too_large" });
    const fine = await fetchCapped(
      async () => new Response(stream(2, 400), { headers: { "content-type": "application/octet-stream" } }),
      "https://files.example/f",
      {},
      1000,
      "the file server",
    );
    expect(fine).toMatchObject({ ok: true, mime: null });
  });

  it("never names the URL in a failure (a Telegram file URL carries the bot token)", async () => {
    const refused = await fetchCapped(
      async () => new Response("no", { status: 403 }),
      "https://api.example/file/bot123:SECRET/x",
      {},
      1000,
      "Telegram's file server",
    );
    const down = await fetchCapped(
      async () => Promise.reject(new TypeError("fetch failed https://api.example/file/bot123:SECRET/x")),
      "https://api.example/file/bot123:SECRET/x",
      {},
      1000,
      "Telegram's file server",
    );
    expect([refused, down]).toEqual([
      { ok: false, reason: "failed", detail: "Telegram's file server answered HTTP 403" },
      { ok: false, reason: "failed", detail: "Telegram's file server could not be reached" },
    ]);
  });
});

describe("relay media links", () => {
  it("work with any of the gateway's secrets until they expire, and not with another key or a forged signature", async () => {
    const key = "relay/gw1/b1/0-cat.png";
    const url = new URL(await mediaLink("https://edge.example", key, "old-secret", 1_000));
    expect(url.pathname).toBe("/relay/media/relay/gw1/b1/0-cat.png");
    const [exp, sig] = [url.searchParams.get("exp"), url.searchParams.get("sig")];
    expect(await checkMediaLink(key, exp, sig, ["new-secret", "old-secret"], 999)).toEqual({ ok: true });
    expect(await checkMediaLink(key, exp, sig, ["old-secret"], 1_001)).toEqual({ ok: false, reason: "expired" });
    expect(await checkMediaLink("relay/gw1/b1/1-other.png", exp, sig, ["old-secret"], 999)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await checkMediaLink(key, "2000", sig, ["old-secret"], 999)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await checkMediaLink(key, null, sig, ["old-secret"], 999)).toEqual({ ok: false, reason: "malformed" });
    expect(gatewayOfMediaKey(key)).toBe("gw1");
    expect(gatewayOfMediaKey("sessions/s1/t/0-x")).toBeNull();
  });
});
