import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { BROWSER_SKIP_LINE, findChromium } from "../support/browser.ts";

/**
 * The e2e files share one wrangler dev started inside the test process (test/support/e2e.ts).
 * That process may be ended without an exit handler running, so it records the wrangler
 * process groups it starts in a file, and this teardown stops whatever is still running.
 */
export default function setup(): () => void {
  // Printed here, in the main process: vitest keeps a skipped suite's own output to itself.
  if (findChromium() === null) console.log(`\n  ${BROWSER_SKIP_LINE}\n`);
  const dir = mkdtempSync(path.join(tmpdir(), "hermes-edge-e2e-pids-"));
  const file = path.join(dir, "pids");
  process.env.HERMES_E2E_PIDFILE = file;
  return () => {
    let pids: string[] = [];
    try {
      pids = readFileSync(file, "utf8").split("\n").filter(Boolean);
    } catch {
      // nothing was started
    }
    for (const pid of pids) {
      try {
        process.kill(-Number(pid), "SIGKILL");
      } catch {
        // already stopped
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
