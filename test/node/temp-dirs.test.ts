import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../support/temp.ts";

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
