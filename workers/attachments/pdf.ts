/**
 * The text of a PDF, where it has a text layer: pdf.js (through unpdf's build for
 * serverless runtimes, no native addon), loaded only when a PDF arrives. Scanned pages
 * have no text; their PDF is then described, not read.
 */
export async function pdfText(bytes: Uint8Array): Promise<string | null> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const doc = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(doc, { mergePages: true });
    const clean = text.replace(/[ \t]+\n/g, "\n").replace(/\n{3,}/g, "\n\n").trim();
    return clean === "" ? null : clean;
  } finally {
    await doc.loadingTask.destroy();
  }
}
