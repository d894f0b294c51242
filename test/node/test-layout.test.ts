import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";

const HOOK = /^(?:beforeAll|afterAll|beforeEach|afterEach)\(/m;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.ts$/.test(name) ? [p] : [];
  });
}

describe("the test suite's own layout", () => {
  it("regression: a hook at the top of a shared helper module ran in one file only (relay files read frames another file had left)", () => {
    // The projects run their files with `isolate: false`: a module is evaluated once per
    // worker, so its top-level hooks register in the first file that imports it. Hooks every
    // file needs go in a setup file (vitest.config.ts), which runs for each file. The e2e
    // suites (*.e2e.ts) are each imported once, inside a describe of test/e2e/all.test.ts.
    const shared = files(path.join(PROJECT_ROOT, "test"))
      .filter((f) => !/\.test\.ts$|\.e2e\.ts$|\/setup\.ts$|\/global-setup\.ts$/.test(f))
      .filter((f) => HOOK.test(readFileSync(f, "utf8")))
      .map((f) => path.relative(PROJECT_ROOT, f));
    expect(shared, "top-level hooks in shared test modules: move them to a setup file").toEqual([]);
  });
});
