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
    // suites (*.e2e.ts) and the workerd projects' suites (*.suite.ts) are each imported once,
    // inside a describe of their project's all.test.ts.
    const shared = files(path.join(PROJECT_ROOT, "test"))
      .filter((f) => !/\.test\.ts$|\.e2e\.ts$|\.suite\.ts$|\/setup\.ts$|\/global-setup\.ts$/.test(f))
      .filter((f) => HOOK.test(readFileSync(f, "utf8")))
      .map((f) => path.relative(PROJECT_ROOT, f));
    expect(shared, "top-level hooks in shared test modules: move them to a setup file").toEqual([]);
  });

  it("a workerd project's tests are its *.suite.ts files: a *.test.ts beside all.test.ts would never run", () => {
    // vitest.config.ts includes only test/worker/all.test.ts, which imports every *.suite.ts
    // beside it and in test/worker-relay/ (test/worker/suites.ts).
    const stray = ["worker", "worker-relay"]
      .flatMap((dir) => files(path.join(PROJECT_ROOT, "test", dir)))
      .filter((f) => /\.test\.ts$/.test(f) && f !== path.join(PROJECT_ROOT, "test", "worker", "all.test.ts"))
      .map((f) => path.relative(PROJECT_ROOT, f));
    expect(stray, "rename them to *.suite.ts").toEqual([]);
    for (const dir of ["worker", "worker-relay"]) {
      const suites = files(path.join(PROJECT_ROOT, "test", dir)).filter((f) => f.endsWith(".suite.ts"));
      expect(suites.length, `suites in test/${dir}`).toBeGreaterThan(5);
    }
  });
});
