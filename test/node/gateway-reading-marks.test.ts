import path from "node:path";
import { describe, expect, it } from "vitest";
import { attachmentSettings, readAttachments, type AttachmentIn } from "../../workers/attachments/index.ts";
import { GatewayStore } from "../../cli/gateway/store.ts";
import { gatewayReadDeps } from "../../cli/gateway/media.ts";
import { pdfWithPages } from "../support/hostile-pdf.ts";
import { tempDir } from "../support/temp.ts";

describe("regression: the gateway re-read, after a crash, the PDF that had crashed it (marks were kept only at the edge)", () => {
  it("a mark set before reading outlives the process (the --db file) and makes the re-run describe the file without fetching it", async () => {
    const dir = tempDir("he-marks-");
    const file = path.join(dir, "gateway.db");
    const before = GatewayStore.open(file);
    // The run that died: it set the mark for attachment 0 of turn t1 and never cleared it.
    await before.readingMarks("t1").set(0);
    before.close();

    const after = GatewayStore.open(file);
    expect(await after.readingMarks("t1").has(0)).toBe(true);
    expect(await after.readingMarks("t2").has(0)).toBe(false);
    const fetched: string[] = [];
    const fetchImpl = (async (input: string | URL | Request) => {
      fetched.push(String(input));
      return new Response(pdfWithPages(3), { headers: { "content-type": "application/pdf" } });
    }) as typeof fetch;
    const settings = attachmentSettings({ maxBytes: undefined, transcribeModel: undefined, model: { provider: "offline" } });
    const doc: AttachmentIn = { kind: "document", ref: "http://127.0.0.1:9/f/1", name: "huge.pdf", mime: "application/pdf", size: null } as AttachmentIn;
    const got = await readAttachments(
      [doc],
      gatewayReadDeps(settings, fetchImpl, () => undefined, after.readingMarks("t1")),
      new AbortController().signal,
    );
    expect(fetched).toEqual([]);
    expect(got.text).toContain("not read: reading it stopped the previous attempt");

    // A turn that reads its PDF to the end leaves no mark behind.
    await readAttachments(
      [doc],
      gatewayReadDeps(settings, fetchImpl, () => undefined, after.readingMarks("t2")),
      new AbortController().signal,
    );
    expect(fetched).toHaveLength(1);
    expect(await after.readingMarks("t2").has(0)).toBe(false);
    after.close();
  });
});
