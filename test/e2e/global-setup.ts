import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { BROWSER_SKIP_LINE, findChromium } from "../support/browser.ts";

/**
 * The e2e files share one wrangler dev started inside the test process (test/support/e2e.ts).
 * That process may be ended without an exit handler running, so it records the wrangler
 * process groups it starts and their storage directories in a file, and this teardown stops
 * whatever is still running and removes what is left on disk.
 */
export default function setup(): () => void {
  // Printed here, in the main process: vitest keeps a skipped suite's own output to itself.
  if (findChromium() === null) console.log(`\n  ${BROWSER_SKIP_LINE}\n`);
  const dir = mkdtempSync(path.join(tmpdir(), "hermes-edge-e2e-pids-"));
  const file = path.join(dir, "pids");
  process.env.HERMES_E2E_PIDFILE = file;
  return () => {
    let lines: string[] = [];
    try {
      lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    } catch {
      // nothing was started
    }
    // Process groups first, then their storage ("dir <path>" lines): a Worker's local D1,
    // object storage and temporary files, which a stop() would have removed.
    for (const pid of lines.filter((l) => !l.startsWith("dir "))) {
      try {
        process.kill(-Number(pid), "SIGKILL");
      } catch {
        // already stopped
      }
    }
    for (const line of lines.filter((l) => l.startsWith("dir "))) rmSync(line.slice(4), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
}
