import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript shared with test/support/checks.mjs, without types
import { STARTUP_GZIP_BUDGET, startupBudgetProblems } from "../support/startup-budget.mjs";
import { tempDir } from "../support/temp.ts";

/** A dry run's output: index.js of `mainBytes` (incompressible when `random`), a lazy module, and a metafile naming `inputs` and the main module's external `imports`. */
function upload(opts: { mainBytes: number; random?: boolean; inputs: string[]; imports?: string[] }) {
  const dir = tempDir("he-startup-budget-");
  const out = path.join(dir, "out");
  mkdirSync(path.join(out, "lazy"), { recursive: true });
  const main = opts.random ? randomBytes(opts.mainBytes) : Buffer.alloc(opts.mainBytes, 97);
  writeFileSync(path.join(out, "index.js"), main);
  writeFileSync(path.join(out, "index.js.map"), "{}");
  writeFileSync(path.join(out, "lazy", "pdf.js"), "export {};\n");
  const meta = path.join(dir, "meta.json");
  const inputs = Object.fromEntries(opts.inputs.map((i) => [i, { bytesInOutput: 10 }]));
  const imports = (opts.imports ?? ["cloudflare:workers"]).map((p) => ({ path: p, kind: "import-statement", external: true }));
  writeFileSync(meta, JSON.stringify({ outputs: { "index.js": { entryPoint: "workers/index.ts", inputs, imports }, "index.js.map": { inputs: {} } } }));
  return { out, meta };
}

describe("the start-up budget checked on the dry run's output (npm test)", () => {
  it("passes a small main module of our code and packages the webhook path uses", () => {
    const u = upload({ mainBytes: 200_000, inputs: ["workers/index.ts", "node_modules/hono/dist/index.js", "node_modules/zod/v4/core/core.js"] });
    expect(startupBudgetProblems(u.out, u.meta).problems).toEqual([]);
  });

  it("fails when the main module bundles the PDF reader, the MCP SDK, a JSON-schema validator or a tokenizer", () => {
    const u = upload({
      mainBytes: 1000,
      inputs: [
        "node_modules/unpdf/dist/pdfjs.mjs",
        "node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js",
        "node_modules/ajv/dist/ajv.js",
        "node_modules/gpt-tokenizer/esm/bpeRanks/cl100k_base.js",
      ],
    });
    const { problems } = startupBudgetProblems(u.out, u.meta);
    expect(problems).toHaveLength(4);
    expect(problems.join("\n")).toMatch(/bundles unpdf.*\n.*@modelcontextprotocol\/sdk.*\n.*ajv.*\n.*gpt-tokenizer/);
  });

  it("fails when the main module passes its gzip budget, and says where to look", () => {
    const u = upload({ mainBytes: STARTUP_GZIP_BUDGET + 50_000, random: true, inputs: ["workers/index.ts"] });
    const { problems, mainGzip } = startupBudgetProblems(u.out, u.meta);
    expect(mainGzip).toBeGreaterThan(STARTUP_GZIP_BUDGET);
    expect(problems).toEqual([expect.stringMatching(/over the start-up budget of 600\.0 KiB.*workers\/lazy\.ts/)]);
  });

  it("fails when the main module imports a Node built-in, which a cold isolate loads first (@slack/web-api required seven)", () => {
    const u = upload({ mainBytes: 1000, inputs: ["workers/index.ts"], imports: ["cloudflare:workers", "node:zlib", "node:stream", "node:zlib"] });
    expect(startupBudgetProblems(u.out, u.meta).problems).toEqual([
      expect.stringMatching(/imports the Node built-ins node:zlib, node:stream, which a cold isolate/),
    ]);
  });

  it("fails when the main module makes an Intl object at load (a grapheme segmenter was 10 ms of start-up), not inside a function", () => {
    const u = upload({ mainBytes: 10, inputs: ["workers/index.ts"] });
    const main = path.join(u.out, "index.js");
    writeFileSync(main, 'var graphemes = new Intl.Segmenter(void 0, { granularity: "grapheme" });\nfunction f() {\n  const n = new Intl.NumberFormat();\n}\n');
    expect(startupBudgetProblems(u.out, u.meta).problems).toEqual([expect.stringMatching(/makes graphemes \(Intl\.Segmenter\) at start-up.*first use/)]);
    writeFileSync(main, "var segmenter = null;\nfunction graphemes() {\n  return segmenter ??= new Intl.Segmenter();\n}\n");
    expect(startupBudgetProblems(u.out, u.meta).problems).toEqual([]);
  });
});
