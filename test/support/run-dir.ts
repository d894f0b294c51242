import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { memoryTmpBase } from "./temp.ts";

/**
 * Vitest's root global setup (vitest.config.ts): one temporary directory for the whole run, in
 * memory where there is a /dev/shm ({@link memoryTmpBase}), made the `TMPDIR` of every
 * process the run starts after it (Vitest's workers, the CLI and gateway processes, the e2e `wrangler dev` Workers and their miniflare files, Chromium's
 * profiles, npm's pack and install), and removed with everything in it when the run ends,
 * however its workers ended. Files remove their own `tempDir()`s as they finish
 * (test/support/temp.ts); this catches what a worker that died left.
 *
 * The e2e Workers' processes are recorded in a file here (`HERMES_E2E_PIDFILE`: a `wrangler
 * dev`'s process group by test/support/wrangler-dev.ts, the workerd miniflare starts by
 * test/support/bundled-worker.ts): a test process may end without an exit handler running,
 * and then nothing else would stop them (a workerd outlives its parent killed by SIGKILL).
 */
export default function setup(): () => void {
  const dir = mkdtempSync(path.join(memoryTmpBase(), "hermes-edge-test-"));
  const pidfile = path.join(dir, "process-groups");
  const before = { TMPDIR: process.env.TMPDIR, HERMES_E2E_PIDFILE: process.env.HERMES_E2E_PIDFILE };
  process.env.TMPDIR = dir;
  process.env.HERMES_E2E_PIDFILE = pidfile;
  return () => {
    let groups: string[] = [];
    try {
      groups = readFileSync(pidfile, "utf8").split("\n").filter(Boolean);
    } catch {
      // none was started
    }
    for (const pid of groups) {
      // A process group (wrangler dev and its children), else the one process (a workerd).
      for (const target of [-Number(pid), Number(pid)]) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // not a group, or already stopped
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
