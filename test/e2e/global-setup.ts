import path from "node:path";
import type { TestProject } from "vitest/node";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { BROWSER_SKIP_LINE, findChromium } from "../support/browser.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The miniflare options wrangler derives from wrangler.toml, for the e2e Workers (test/support/bundled-worker.ts). */
    e2eWorkerOptions: Record<string, unknown>;
  }
}

/**
 * In the main process, once: says when the browser tests cannot run (Vitest keeps a skipped
 * suite's own output to itself), and hands the e2e Workers the options wrangler derives from
 * wrangler.toml. wrangler is loaded here anyway (the worker project's plugin reads the same
 * file with it); loading it again in the e2e process cost about 1.9 s of CPU. (The e2e
 * Workers' leftover files are the root global setup's: test/support/run-dir.ts.)
 */
export default async function setup(project: TestProject): Promise<void> {
  if (findChromium() === null) console.log(`\n  ${BROWSER_SKIP_LINE}\n`);
  const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
  // Its words about secrets taken from process.env (the e2e Workers get every setting as a binding) are not the run's.
  const level = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "error";
  try {
    const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(PROJECT_ROOT, "wrangler.toml"));
    project.provide("e2eWorkerOptions", JSON.parse(JSON.stringify(workerOptions)) as Record<string, unknown>);
  } finally {
    if (level === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = level;
  }
}
