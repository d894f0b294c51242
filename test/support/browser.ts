import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

/**
 * Where a Chromium may be: `CHROMIUM_PATH` if set, then Debian's `chromium-headless-shell`
 * and `chromium` packages and the usual other names. The headless shell first: the console
 * tests cost about half the CPU in it (measured 3 Dec: 4.4 s against 8.0 s for the nine tests,
 * same load), and it is what CI installs. Nothing is downloaded: playwright-core only drives a
 * browser the machine already has.
 */
const CANDIDATES = [
  "/usr/lib/chromium/chromium-headless-shell",
  "/usr/bin/chromium-headless-shell",
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
];

/** The Chromium to drive, or null when the machine has none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  const given = env.CHROMIUM_PATH?.trim();
  if (given) return existsSync(given) ? given : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/** The one line `npm test` prints when the browser tests cannot run. */
export const BROWSER_SKIP_LINE =
  "browser tests SKIPPED: no Chromium found (apt-get install -y chromium-headless-shell, or set CHROMIUM_PATH; .ci/run installs it)";

export function launchChromium(executablePath: string): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

/** A response the test expects to fail (a refused sign-in), by path and status. */
interface Allowed {
  path: string;
  status: number;
}

/**
 * A page that records everything that went wrong in it: console errors and warnings
 * (a CSP refusal is one), uncaught exceptions, dialogs (an `alert()` that got through),
 * failed requests and HTTP errors the test did not announce with `allow`. Requests the
 * page itself cancelled (`fetch` aborted on leaving a view) are not failures; a script,
 * style or document that fails to load always is.
 */
export class WatchedPage {
  readonly problems: string[] = [];
  readonly #allowed: Allowed[] = [];
  readonly context: BrowserContext;
  readonly page: Page;

  private constructor(context: BrowserContext, page: Page) {
    this.context = context;
    this.page = page;
  }

  static async open(browser: Browser, opts: { width?: number; height?: number } = {}): Promise<WatchedPage> {
    const context = await browser.newContext({ viewport: { width: opts.width ?? 1200, height: opts.height ?? 800 }, acceptDownloads: false });
    const w = new WatchedPage(context, await context.newPage());
    const { page } = w;
    page.on("console", (m) => {
      if (m.type() !== "error" && m.type() !== "warning") return;
      // Chromium reports a 4xx fetch on the console too: the one the test allowed is expected.
      const url = m.location().url;
      if (
        /Failed to load resource: the server responded with a status of (\d+)/.test(m.text()) &&
        w.#isAllowed(url, Number(/status of (\d+)/.exec(m.text())![1]))
      )
        return;
      w.problems.push(`console ${m.type()}: ${m.text()} (${url})`);
    });
    page.on("pageerror", (e) => w.problems.push(`page error: ${e.message}`));
    page.on("dialog", (d) => {
      w.problems.push(`dialog opened: ${d.type()} ${d.message()}`);
      void d.dismiss();
    });
    page.on("requestfailed", (r) => {
      const reason = r.failure()?.errorText ?? "";
      if (r.resourceType() === "fetch" && reason === "net::ERR_ABORTED") return;
      w.problems.push(`request failed: ${r.method()} ${r.url()} ${reason}`);
    });
    page.on("response", (r) => {
      if (r.status() >= 400 && !w.#isAllowed(r.url(), r.status())) w.problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    });
    return w;
  }

  #isAllowed(url: string, status: number): boolean {
    let pathname = url;
    try {
      pathname = new URL(url).pathname;
    } catch {
      // not a URL: compare as is
    }
    return this.#allowed.some((a) => a.status === status && pathname === a.path);
  }

  /** Announces a failing response the test is about to cause. */
  allow(pathname: string, status: number): void {
    this.#allowed.push({ path: pathname, status });
  }

  /**
   * What went wrong since the last call (or since the page opened), for a page that several
   * tests share: each one's problems are its own, and its `allow`s end with it.
   */
  takeProblems(): string[] {
    this.#allowed.length = 0;
    return this.problems.splice(0);
  }

  /** Stops watching and closes the page (requests still open are cancelled, not failures). */
  async close(): Promise<string[]> {
    this.page.removeAllListeners();
    await this.context.close();
    return this.problems;
  }
}

/** Saves a screenshot into `HERMES_CONSOLE_SCREENSHOTS` when it is set (README's pictures: docs/console/). */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.HERMES_CONSOLE_SCREENSHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.evaluate("window.scrollTo(0, 0)");
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
