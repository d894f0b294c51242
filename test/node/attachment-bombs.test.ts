import { describe, expect, it } from "vitest";
import { pdfText, PDF_LIMITS, readAttachments, type AttachmentIn, type Download, type ReadDeps, type ReadMarks } from "../../workers/attachments/index.ts";
import { flateInflatedBytes } from "../../workers/attachments/inflate.ts";
import { pdfFlateBomb, pdfWithPages } from "../support/hostile-pdf.ts";

const doc = (ref: string, name = `${ref}.pdf`): AttachmentIn => ({ kind: "document", name, mime: "application/pdf", size: null, ref });

function deps(files: Record<string, Uint8Array>, extra: Partial<ReadDeps> = {}): ReadDeps & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    maxBytes: 10 * 1024 * 1024,
    async download(a): Promise<Download> {
      asked.push(a.ref);
      const f = files[a.ref];
      return f ? { ok: true, bytes: f, mime: "application/pdf" } : { ok: false, reason: "failed", detail: "gone" };
    },
    ...extra,
  };
}

/** Marks kept in a map, as a durable store keeps them across a restart. */
function memoryMarks(store = new Set<number>()): ReadMarks & { store: Set<number>; log: string[] } {
  const log: string[] = [];
  return {
    store,
    log,
    has: async (i) => store.has(i),
    set: async (i) => void (store.add(i), log.push(`set ${i}`)),
    clear: async (i) => void (store.delete(i), log.push(`clear ${i}`)),
  };
}

const signal = () => new AbortController().signal;

describe("regression: a PDF of 30,000 tiny pages exhausted the Worker's heap", () => {
  it("reads only the first pages of thousands (the count is known before any page is loaded), and the model is told so", async () => {
    // 3,000 pages and a bound of 10 here, cheap enough for the suite (pdf.js parses the whole
    // page tree first: a 30,000-page file costs it seconds); the default bound is tested below,
    // and the original 30,000-page file is a bench:chaos case (scenario j) against the real Worker.
    const d = deps({ big: pdfWithPages(3_000) }, { pdfText: (b, o) => pdfText(b, { ...o, maxPages: 10 }) });
    const got = await readAttachments([doc("big")], d, signal());
    expect(got.records[0]!.status).toBe("inlined");
    expect(got.text).toContain("PDF of 3,000 pages: read the first 10");
    expect(got.text).toContain("page 10.");
    expect(got.text).not.toContain("page 11.");
  });

  it("by default reads the first 200 pages", async () => {
    expect(PDF_LIMITS.maxPages).toBe(200);
    const got = await readAttachments([doc("p")], deps({ p: pdfWithPages(230) }), signal());
    expect(got.text).toContain("PDF of 230 pages: read the first 200");
    expect(got.text).toContain("page 200.");
    expect(got.text).not.toContain("page 201.");
  });

  it("yields while reading, so the host answers other requests (a /health) before it ends", async () => {
    let answered = false;
    setTimeout(() => (answered = true), 0);
    let pauses = 0;
    const reading = await pdfText(pdfWithPages(60), {
      pause: async () => {
        pauses++;
        await new Promise((r) => setTimeout(r, 0));
      },
    });
    expect(reading).toMatchObject({ pages: 60, read: 60, stopped: null });
    expect(pauses).toBe(11);
    expect(answered).toBe(true);
  });

  it("/stop ends the reading between pages, with what was read", async () => {
    const ctrl = new AbortController();
    const reading = await pdfText(pdfWithPages(50), { signal: ctrl.signal, pause: async () => ctrl.abort() });
    expect(reading).toMatchObject({ pages: 50, read: 5, stopped: "stopped" });
    expect(reading.text).toContain("page 5.");
    expect(reading.text).not.toContain("page 6.");
  });

  it("stops at the time bound and at the character bound", async () => {
    let t = 0;
    const timed = await pdfText(pdfWithPages(50), { maxMs: 10_000, now: () => (t += 1000) });
    expect(timed.stopped).toBe("time");
    expect(timed.read).toBeLessThan(10);
    const chars = await pdfText(pdfWithPages(50), { maxChars: 30 });
    expect(chars).toMatchObject({ stopped: "chars", read: 5 });
    expect(chars.text!.length).toBeLessThanOrEqual(30);
  });
});

describe("regression: a 150 KB Flate bomb inflating to 50 MB took 16 s and +650 MB", () => {
  it("is found by inflating no more than the cap, and described instead of read", async () => {
    // Past the cap by 2 MiB (the original inflated to 50 MB): deflating the bomb is what costs here.
    const bomb = await pdfFlateBomb(PDF_LIMITS.maxInflatedBytes + 2 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(150 * 1024);
    const seen = await flateInflatedBytes(bomb, PDF_LIMITS.maxInflatedBytes);
    expect(seen).toBeGreaterThan(PDF_LIMITS.maxInflatedBytes);
    expect(seen).toBeLessThan(PDF_LIMITS.maxInflatedBytes + 1024 * 1024);
    let parsed = 0;
    const got = await readAttachments([doc("bomb")], deps({ bomb }, { pdfText: async (b, o) => (parsed++, pdfText(b, o)) }), signal());
    expect(parsed).toBe(1);
    expect(got.text).not.toContain("its text");
    expect(got.records[0]).toMatchObject({ status: "described", detail: "inflates past the limit" });
    expect(got.text).toContain("a PDF whose compressed content inflates past 24 MB, so it was not read");
  });

  it("a PDF whose streams inflate under the cap is read as before", async () => {
    const small = await pdfFlateBomb(1000);
    expect(await flateInflatedBytes(small, PDF_LIMITS.maxInflatedBytes)).toBe(1000);
    expect((await pdfText(small)).stopped).toBeNull();
  });
});

describe("regression: the turn re-run after a crash read the same PDF again and crashed again", () => {
  it("marks a PDF while it is read and clears the mark after", async () => {
    const marks = memoryMarks();
    let markedDuring = false;
    const d = deps({ a: pdfWithPages(2) }, { marks, pdfText: async (b, o) => ((markedDuring = marks.store.has(0)), pdfText(b, o)) });
    const got = await readAttachments([doc("a")], d, signal());
    expect(got.records[0]!.status).toBe("inlined");
    expect(markedDuring).toBe(true);
    expect(marks.log).toEqual(["set 0", "clear 0"]);
  });

  it("an attachment still marked (the previous attempt died reading it) is described, not fetched or read", async () => {
    const marks = memoryMarks(new Set([1]));
    let reads = 0;
    const d = deps({ a: pdfWithPages(1), b: pdfWithPages(3) }, { marks, pdfText: async (b, o) => (reads++, pdfText(b, o)) });
    const got = await readAttachments([doc("a"), doc("b", "huge.pdf")], d, signal());
    expect(d.asked).toEqual(["a"]);
    expect(reads).toBe(1);
    expect(got.records[1]).toMatchObject({ status: "described", detail: "reading it stopped the previous attempt" });
    expect(got.text).toContain("huge.pdf");
    expect(got.text).toContain("not read: reading it stopped the previous attempt");
  });
});
