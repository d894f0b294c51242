import { BROWSER_SKIP_LINE, findChromium } from "../support/browser.ts";

/**
 * Says once, in the main process, when the browser tests cannot run: Vitest keeps a skipped
 * suite's own output to itself. (The e2e Workers' leftover processes and files are the root
 * global setup's: test/support/run-dir.ts.)
 */
export default function setup(): void {
  if (findChromium() === null) console.log(`\n  ${BROWSER_SKIP_LINE}\n`);
}
