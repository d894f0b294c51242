import { beforeAll, describe } from "vitest";
import { markSuiteStart } from "./platform-helpers.ts";

/**
 * A workerd project runs one test file, `all.test.ts`, which imports every `*.suite.ts` beside
 * it (Vite's `import.meta.glob`, so a new suite cannot be left out), each inside a describe
 * named after its file. Vitest gives a project whose files are separate test files one
 * runtime per pool slot: two workerd processes per project on two cores, each loading the
 * Worker and running its own share of the files. One runtime running them all costs 10-15 s
 * of CPU less for the worker project, 8 s for the relay project (TESTING.md, "One runtime
 * per Worker configuration").
 *
 * A suite's hooks stay inside its describe. Each suite starts with markSuiteStart(), from which
 * until() looks at the session objects that suite reaches (platform-helpers.ts); settle()
 * waits on what was reached since it last ran (test/worker/reached.ts).
 */
export function runSuites(suites: Record<string, () => Promise<unknown>>): void {
  const files = Object.keys(suites).sort();
  if (files.length === 0) throw new Error("no *.suite.ts files found beside all.test.ts");
  for (const file of files) {
    describe(file.replace(/^\.\//, ""), async () => {
      beforeAll(markSuiteStart);
      await suites[file]!();
    });
  }
}
