import { afterEach, describe, expect, it, vi } from "vitest";
import { SseSink } from "../../durable-objects/session-agent/sse.ts";
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

describe("an API turn's event stream (SseSink)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const sink = () => {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    return { sink: new SseSink(writable.getWriter()), text: new Response(readable).text() };
  };

  it("asks the model's stream to pause once, after the first delta, and writes every event", async () => {
    const { sink: s, text } = sink();
    const first = s.event({ type: "text", text: "Hel" });
    expect(first).toBeInstanceOf(Promise);
    await first;
    expect(s.event({ type: "text", text: "lo" })).toBeUndefined();
    expect(s.event({ type: "tool", phase: "start", name: "fetch_url", id: "c1", summary: "fetch_url https://example.org" })).toBeUndefined();
    s.end({ finishReason: "stop", text: "Hello", usage: { input: 1, output: 1 }, toolCalls: 1 });
    const events = [...parseSseText(await text)];
    expect(events.map((e) => e.event)).toEqual(["delta", "delta", "tool", "done"]);
  });

  it("untilSent: resolves when the model request went out, when the turn ended, or after the wait", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const settled = (p: Promise<void>) => {
      let done = false;
      void p.then(() => (done = true));
      return () => done;
    };
    const a = sink().sink;
    const aDone = settled(a.untilSent(1000));
    await vi.advanceTimersByTimeAsync(0);
    expect(aDone()).toBe(false);
    a.sent();
    await vi.advanceTimersByTimeAsync(0);
    expect(aDone()).toBe(true);
    const b = sink().sink;
    const bDone = settled(b.untilSent(1000));
    b.end({ finishReason: "error", text: "", error: { code: "x", message: "y" }, usage: { input: 0, output: 0 }, toolCalls: 0 });
    await vi.advanceTimersByTimeAsync(0);
    expect(bDone()).toBe(true);
    const c = sink().sink;
    const cDone = settled(c.untilSent(1000));
    await vi.advanceTimersByTimeAsync(999);
    expect(cDone()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(cDone()).toBe(true);
  });
});

function* parseSseText(body: string): Generator<{ event: string; data: string }> {
  const parser = new SseParser();
  yield* parser.push(body);
  yield* parser.end();
}
