/**
 * Hostile PDFs, built from code (no binary blobs): one with many tiny pages, and a Flate
 * bomb (a small file whose one content stream inflates to many megabytes). Runtime-neutral
 * (Buffer aside, which workerd's nodejs_compat has): the bomb is deflated by CompressionStream.
 */

/** A PDF of these objects (bodies as text, stream data as bytes), with a correct xref table. */
function pdf(objects: Array<string | { dict: string; data: Uint8Array }>): Uint8Array {
  const parts: Buffer[] = [];
  let length = 0;
  const push = (b: Buffer) => (parts.push(b), (length += b.length));
  push(Buffer.from("%PDF-1.4\n", "latin1"));
  const offsets: string[] = [];
  objects.forEach((body, i) => {
    offsets.push(`${String(length).padStart(10, "0")} 00000 n \n`);
    if (typeof body === "string") push(Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`, "latin1"));
    else {
      push(Buffer.from(`${i + 1} 0 obj\n${body.dict.replace("%LEN%", String(body.data.length))}\nstream\n`, "latin1"));
      push(Buffer.from(body.data));
      push(Buffer.from("\nendstream\nendobj\n", "latin1"));
    }
  });
  const xref = length;
  push(Buffer.from(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.join("")}`, "latin1"));
  push(Buffer.from(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, "latin1"));
  return new Uint8Array(Buffer.concat(parts));
}

const FONT = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

/** A PDF of `pages` tiny pages, page n showing "page n." (30,000 pages: about 4 MB, pages inheriting size and font). */
export function pdfWithPages(pages: number): Uint8Array {
  // 1 catalog, 2 pages, 3 font, then page n at 2n+2 and its content at 2n+3.
  const kids = Array.from({ length: pages }, (_, i) => `${2 * (i + 1) + 2} 0 R`).join(" ");
  const objects: Array<string | { dict: string; data: Uint8Array }> = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} /MediaBox [0 0 60 20] /Resources << /Font << /F1 3 0 R >> >> >>`,
    FONT,
  ];
  for (let n = 1; n <= pages; n++) {
    const text = Buffer.from(`BT /F1 9 Tf 5 5 Td (page ${n}.) Tj ET`, "latin1");
    objects.push(`<< /Type /Page /Parent 2 0 R /Contents ${2 * n + 3} 0 R >>`);
    objects.push({ dict: "<< /Length %LEN% >>", data: text });
  }
  return pdf(objects);
}

/** A one-page PDF whose content stream is `inflated` bytes of spaces, Flate-compressed (50 MB: about 50 KB). */
export async function pdfFlateBomb(inflated: number): Promise<Uint8Array> {
  const data = new Uint8Array(
    await new Response(new Blob([new Uint8Array(inflated).fill(0x20)]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer(),
  );
  return pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 60 20] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    { dict: "<< /Length %LEN% /Filter /FlateDecode >>", data },
    FONT,
  ]);
}
