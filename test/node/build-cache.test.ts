import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript run by the build scripts, without types
import { cachedBuild } from "../../cli/build-cache.mjs";

const CACHE = path.join(import.meta.dirname, "..", "..", "node_modules", ".cache", "hermes-edge-build");
const made: string[] = [];
afterEach(() => {
  for (const p of made.splice(0)) rmSync(p, { recursive: true, force: true });
});

/** A build over files in a temp dir, under a name of its own, that counts its runs and copies `in.txt` to `out.txt`. */
function fixture() {
  const dir = mkdtempSync(path.join(tmpdir(), "he-build-cache-"));
  const name = `test-${path.basename(dir)}`;
  made.push(dir, path.join(CACHE, `${name}.json`), path.join(CACHE, `${name}.lock`));
  const input = path.join(dir, "in.txt");
  const output = path.join(dir, "out.txt");
  writeFileSync(input, "one");
  let runs = 0;
  // A look at a held lock waits one event-loop turn, not the scripts' 100 ms timer.
  const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
  const run = (extra?: unknown) =>
    cachedBuild(
      { name, script: import.meta.url, extra },
      async () => {
        runs += 1;
        await new Promise((resolve) => setImmediate(resolve));
        writeFileSync(output, readFileSync(input));
        return { inputs: [input], outputs: [output] };
      },
      { pause },
    ) as Promise<boolean>;
  return { name, input, output, run, runs: () => runs };
}

describe("cachedBuild (cli/build-cache.mjs: the three esbuild builds skip work already on disk)", () => {
  it("builds once, then skips while its inputs, outputs and key are unchanged", async () => {
    const f = fixture();
    expect(await f.run()).toBe(true);
    expect(await f.run()).toBe(false);
    expect(f.runs()).toBe(1);
    expect(readFileSync(f.output, "utf8")).toBe("one");
  });

  it("rebuilds after an input changed, an output was edited or deleted, or the key changed", async () => {
    const f = fixture();
    await f.run();
    writeFileSync(f.input, "two");
    expect(await f.run()).toBe(true);
    expect(readFileSync(f.output, "utf8")).toBe("two");
    writeFileSync(f.output, "tampered");
    expect(await f.run()).toBe(true);
    expect(readFileSync(f.output, "utf8")).toBe("two");
    rmSync(f.output);
    expect(await f.run()).toBe(true);
    expect(await f.run({ entries: ["another"] })).toBe(true);
    expect(await f.run({ entries: ["another"] })).toBe(false);
    expect(f.runs()).toBe(5);
  });

  it("two builds at once: one builds, the other waits and finds it fresh", async () => {
    const f = fixture();
    expect((await Promise.all([f.run(), f.run()])).sort()).toEqual([false, true]);
    expect(f.runs()).toBe(1);
  });

  it("a lock left by a build that was killed is taken over, not waited on", async () => {
    const f = fixture();
    const dead = spawnSync(process.execPath, ["-e", "process.pid"]).pid;
    mkdirSync(path.join(CACHE, `${f.name}.lock`), { recursive: true });
    writeFileSync(path.join(CACHE, `${f.name}.lock`, "pid"), String(dead));
    expect(await f.run()).toBe(true);
  });

  it("a lock whose builder was killed before writing its pid is taken over once it is old, not waited on for minutes", async () => {
    const f = fixture();
    const lockDir = path.join(CACHE, `${f.name}.lock`);
    mkdirSync(lockDir, { recursive: true });
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockDir, old, old);
    expect(await f.run()).toBe(true);
  });

  it("a crash mid-build leaves no stamp: the next run builds again", async () => {
    const f = fixture();
    const failing = cachedBuild({ name: f.name, script: import.meta.url }, async () => {
      throw new Error("esbuild failed");
    }) as Promise<boolean>;
    await expect(failing).rejects.toThrow("esbuild failed");
    expect(await f.run()).toBe(true);
  });
});
