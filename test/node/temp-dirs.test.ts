import { existsSync, readdirSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryTmpBase, removeTempDirs, SHM_MIN_FREE, tempDir } from "../support/temp.ts";

describe("the tests' temporary directories", () => {
  it("are made empty under the system's tmpdir and removed with their contents", () => {
    const a = tempDir("he-temp-test-");
    const b = tempDir("he-temp-test-");
    expect(a).not.toBe(b);
    expect(path.dirname(a)).toBe(tmpdir());
    expect(readdirSync(a)).toEqual([]);
    writeFileSync(path.join(a, "gateway.db"), "x");
    removeTempDirs();
    expect([existsSync(a), existsSync(b)]).toEqual([false, false]);
    // Nothing is left to remove twice.
    expect(() => removeTempDirs()).not.toThrow();
  });
});

describe("where throwaway storage goes (memoryTmpBase)", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("a TMPDIR the caller set wins", () => {
    vi.stubEnv("TMPDIR", "/var/tmp");
    expect(memoryTmpBase()).toBe("/var/tmp");
  });

  it("without one, /dev/shm on Linux (memory, not the disk's journal and fsync) when it has room; else the system's tmpdir", () => {
    // Asserted on any machine (not skipped where /dev/shm is missing or small): what this one should choose.
    const roomy = process.platform === "linux" && existsSync("/dev/shm") && statfsSync("/dev/shm").bavail * statfsSync("/dev/shm").bsize >= SHM_MIN_FREE;
    vi.stubEnv("TMPDIR", "");
    expect(memoryTmpBase()).toBe(roomy ? "/dev/shm" : tmpdir());
  });

  it("a /dev/shm that is missing or not a directory is passed over for the system's tmpdir", () => {
    vi.stubEnv("TMPDIR", "");
    expect(memoryTmpBase("/nonexistent-shm")).toBe(tmpdir());
    expect(memoryTmpBase("/etc/hostname")).toBe(tmpdir());
  });
});
