import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** Directories tempDir() made and nobody removed yet. */
const made: string[] = [];

/**
 * A fresh, empty temporary directory (`<tmpdir>/<prefix>XXXXXX`), removed with everything in
 * it after the test file that made it: the Node and e2e projects' setup file
 * (test/node/setup.ts) calls {@link removeTempDirs} after each file.
 */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory {@link tempDir} made so far. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
