import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readTurnAttachments } from "../../workers/attachments/index.ts";
import { flateInflatedBytes } from "../../workers/attachments/inflate.ts";
import { edgeReadDeps, readingMark, sessionFilesPrefix } from "../../workers/conversations/files.ts";
import { pdfWithText } from "../support/files.ts";
import { pdfFlateBomb } from "../support/hostile-pdf.ts";
import { telegram } from "./setup.ts";

const meta = (fileId: string) => ({ attachments: [{ kind: "document", name: "crash.pdf", mime: "application/pdf", size: 900, ref: fileId }] });

describe("regression: a turn re-run after a crash read the PDF that crashed it again", () => {
  it("marks the PDF in FILES while it is read, and clears the mark after", async () => {
    const where = { platform: "telegram", prefix: sessionFilesPrefix("s-marks-1"), turnId: "t-1" };
    const deps = edgeReadDeps(env, where, () => undefined);
    await deps.marks!.set(0);
    expect(await env.FILES.head(readingMark(where.prefix, "t-1", 0))).not.toBeNull();
    expect(await deps.marks!.has(0)).toBe(true);
    await deps.marks!.clear(0);
    expect(await deps.marks!.has(0)).toBe(false);

    telegram.serveFile("marks-ok", pdfWithText("fine numbers"), "application/octet-stream", "documents/marks-ok.pdf");
    const got = await readTurnAttachments(
      meta("marks-ok"),
      [],
      edgeReadDeps(env, { ...where, turnId: "t-2" }, () => undefined),
      new AbortController().signal,
    );
    expect(got!.records[0]!.status).toBe("inlined");
    expect(await env.FILES.head(readingMark(where.prefix, "t-2", 0))).toBeNull();
  });

  it("a PDF still marked from the attempt that died is described, not downloaded or read again", async () => {
    const where = { platform: "telegram", prefix: sessionFilesPrefix("s-marks-2"), turnId: "t-9" };
    await env.FILES.put(readingMark(where.prefix, where.turnId, 0), "1");
    telegram.serveFile("marks-crash", pdfWithText("never read"), "application/octet-stream", "documents/marks-crash.pdf");
    const before = telegram.called("/getFile").length;
    const got = await readTurnAttachments(
      meta("marks-crash"),
      [],
      edgeReadDeps(env, where, () => undefined),
      new AbortController().signal,
    );
    expect(telegram.called("/getFile").length).toBe(before);
    expect(got!.records[0]).toMatchObject({ status: "described", detail: "reading it stopped the previous attempt" });
    expect(got!.text).toContain("crash.pdf");
    expect(got!.text).toContain("not read: reading it stopped the previous attempt");
  });
});

describe("regression: a Flate bomb was inflated whole (workerd's DecompressionStream drops the output of a piece it fails on)", () => {
  // workerd's stream, not the cap's size, is the point here: a 12 MB bomb against a 4 MB cap
  // (test/node/attachment-bombs.test.ts holds the 50 MB bomb against PDF_LIMITS). Inflated
  // whole it would count 12 MB; with the dropped output, next to nothing.
  it("counts the bomb's inflated bytes in workerd and stops just past the cap", async () => {
    const cap = 4 * 1024 * 1024;
    const bomb = await pdfFlateBomb(3 * cap);
    const seen = await flateInflatedBytes(bomb, cap);
    expect(seen).toBeGreaterThan(cap);
    expect(seen).toBeLessThan(cap + 2 * 1024 * 1024);
  });
});
