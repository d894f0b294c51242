import { describe, expect, it } from "vitest";
import { SseParser, formatSse, parseSse } from "../../workers/agent/index.ts";

describe("server-sent events", () => {
  it("parses events split at every possible byte, with CRLF, comments and multi-line data", () => {
    const text = `: hello\r\nevent: delta\r\ndata: {"text":"a"}\r\n\r\nevent: done\ndata: line1\ndata: line2\n\n`;
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()];
      expect(events, `cut at ${cut}`).toEqual([
        { event: "delta", data: '{"text":"a"}' },
        { event: "done", data: "line1\nline2" },
      ]);
    }
  });

  it("reads a byte stream and flushes a last event with no blank line", async () => {
    const bytes = new TextEncoder().encode(formatSse("delta", { text: "é" }) + "data: tail");
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]));
        c.close();
      },
    });
    const seen = [];
    for await (const ev of parseSse(body)) seen.push(ev);
    expect(seen).toEqual([
      { event: "delta", data: '{"text":"é"}' },
      { event: "message", data: "tail" },
    ]);
  });
});
