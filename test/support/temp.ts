import { accessSync, constants, mkdtempSync, rmSync, statfsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** The free space a /dev/shm needs for {@link memoryTmpBase} to choose it. */
export const SHM_MIN_FREE = 1024 * 1024 * 1024;

/**
 * Where throwaway storage goes: the caller's `TMPDIR` when set; else, on Linux, `/dev/shm`
 * (memory) when it is a writable directory; else the system's temporary directory. On a disk
 * every SQLite file a runtime creates and commits (an object's storage, D1, miniflare's own)
 * waits for the filesystem's journal and fsync, on the thread that runs the isolate: on this
 * machine's ext4 the worker project took 28.3 and 32.3 s with its storage in /tmp, 21.1 and
 * 21.0 s in /dev/shm, and a sampled profile counted that wait as a new chat's CPU (TESTING.md,
 * docs/benchmarks.md). The test run's directory (run-dir.ts) and the benchmarks' Workers
 * (bench/lib.ts) use it. A /dev/shm with less than {@link SHM_MIN_FREE} free (a container's
 * default is 64 MiB) is passed over: a whole `npm test` put about 100 MB there at its peak.
 */
export function memoryTmpBase(shm = "/dev/shm"): string {
  if (process.env.TMPDIR) return tmpdir();
  try {
    if (process.platform === "linux" && statSync(shm).isDirectory()) {
      accessSync(shm, constants.W_OK);
      const fs = statfsSync(shm);
      if (fs.bavail * fs.bsize >= SHM_MIN_FREE) return shm;
    }
  } catch {
    // none here, or not ours to write
  }
  return tmpdir();
}

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
