import { loadPdfjs } from "../lazy.ts";
import { flateInflatedBytes } from "./inflate.ts";

/**
 * The text of a PDF, where it has a text layer: pdf.js (through unpdf's build for
 * serverless runtimes, no native addon), loaded only when a PDF arrives. Reading is
 * bounded: pages (the count is known before any page is loaded), bytes its Flate streams
 * inflate to (counted before pdf.js decodes anything), characters and time; `/stop` ends it
 * between pages, and it yields every few pages so the host keeps answering.
 */

export interface PdfLimits {
  /** Pages read at most (the first ones). */
  maxPages: number;
  /** Bytes all Flate streams together may inflate to; past it the PDF is not read. */
  maxInflatedBytes: number;
  /** Characters of text read at most. */
  maxChars: number;
  /** Milliseconds of reading at most. */
  maxMs: number;
}

export const PDF_LIMITS: PdfLimits = { maxPages: 200, maxInflatedBytes: 24 * 1024 * 1024, maxChars: 100_000, maxMs: 20_000 };

/** What reading a PDF gave: its text (null: none was found), its page count, and why it stopped early. */
export interface PdfReading {
  text: string | null;
  pages: number;
  /** Pages read. */
  read: number;
  /** Why reading stopped before the end: a bound, `/stop`, or inflating past the cap (then nothing was read). */
  stopped: "pages" | "chars" | "time" | "stopped" | "inflated" | null;
}

export interface PdfReadOptions extends Partial<PdfLimits> {
  signal?: AbortSignal;
  /** The clock the time bound is read on (tests inject one). */
  now?: () => number;
  /** Lets the host run between pages (default: a zero timer). */
  pause?: () => Promise<void>;
}

/** Pages read between two pauses. */
const PAGES_PER_PAUSE = 5;

const zeroTimer = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export async function pdfText(bytes: Uint8Array, o: PdfReadOptions = {}): Promise<PdfReading> {
  const limits = { ...PDF_LIMITS, ...o };
  const now = o.now ?? Date.now;
  const pause = o.pause ?? zeroTimer;
  const started = now();
  const expired = () => now() - started > limits.maxMs;
  if (o.signal?.aborted) return { text: null, pages: 0, read: 0, stopped: "stopped" };
  const inflated = await flateInflatedBytes(bytes, limits.maxInflatedBytes, { ...(o.signal ? { signal: o.signal } : {}), expired });
  if (inflated > limits.maxInflatedBytes) return { text: null, pages: 0, read: 0, stopped: "inflated" };
  if (o.signal?.aborted) return { text: null, pages: 0, read: 0, stopped: "stopped" };
  if (expired()) return { text: null, pages: 0, read: 0, stopped: "time" };
  const { getDocumentProxy } = await loadPdfjs();
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const doc = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const pages = doc.numPages;
    const texts: string[] = [];
    let chars = 0;
    let stopped: PdfReading["stopped"] = null;
    for (let n = 1; n <= pages; n++) {
      // Pause first: a /stop or the time running out while the host ran is seen before the next page.
      if (n > 1 && (n - 1) % PAGES_PER_PAUSE === 0 && n <= limits.maxPages) await pause();
      if (n > limits.maxPages) stopped = "pages";
      else if (chars >= limits.maxChars) stopped = "chars";
      else if (o.signal?.aborted) stopped = "stopped";
      else if (expired()) stopped = "time";
      if (stopped) break;
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const text = content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("");
      page.cleanup();
      texts.push(text);
      chars += text.length;
    }
    const joined = texts
      .join("\n")
      .replace(/[^\S\n]+/g, " ")
      .replace(/ ?\n ?/g, "\n")
      .replace(/\n{3,}/g, "\n\n");
    const clean = joined.slice(0, limits.maxChars).trim();
    return { text: clean === "" ? null : clean, pages, read: texts.length, stopped };
  } finally {
    await doc.loadingTask.destroy();
  }
}
