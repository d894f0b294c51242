import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { dropRuntimeNoise } from "./test/support/runtime-noise.ts";
import { RELAY_CLASSES, RELAY_STORAGE } from "./test/worker/relay-config.ts";
import { DISCORD_TEST, DISCORD_TEST_PUBLIC_KEY, SLACK_TEST, TELEGRAM_TEST, WHATSAPP_TEST, MATRIX_TEST } from "./test/support/signing.ts";

/**
 * Every Worker setting, blank, so nothing from a developer's .dev.vars leaks into tests;
 * then the few the workerd tests rely on. Outbound hosts are fakes behind a fetch stub.
 */
const WORKER_TEST_VARS: Record<string, string> = {
  API_TOKEN: "test-token",
  LLM_PROVIDER: "",
  LLM_BASE_URL: "https://llm.test/v1",
  LLM_API_KEY: "test-llm-key",
  LLM_MODEL: "fake-model",
  BUSY_POLICY: "queue",
  SYSTEM_PROMPT: "",
  LLM_CONTEXT_TOKENS: "",
  DAILY_TOKEN_BUDGET: "",
  RETENTION_DAYS: "",
  OFFLINE_STREAM_DELAY_MS: "0",
  TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token,
  TELEGRAM_WEBHOOK_SECRET: TELEGRAM_TEST.secret,
  TELEGRAM_HOME_CHANNEL: "",
  TELEGRAM_HOME_CHANNEL_THREAD_ID: "",
  // 1001, 1002: telegram tests; 1004: recovery; 1005, 1006: handoff; 1007: an admin; 1008: hostile bodies; 1009: sessions kept. 1003 is never allowed.
  TELEGRAM_ALLOWED_USERS: "1001,1002,1004,1005,1006,1007,1008,1009,1021,1022,1023,1024,1025,1031,1032,1033,1034,1035",
  TELEGRAM_API_ROOT: "https://telegram.test",
  // Who may /resume CLI sessions and /sethome (1005, 1006: handoffs into their DMs).
  TELEGRAM_ADMIN_USERS: "1005,1006,1007,1025,1035",
  DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId,
  DISCORD_PUBLIC_KEY: DISCORD_TEST_PUBLIC_KEY,
  DISCORD_BOT_TOKEN: DISCORD_TEST.botToken,
  DISCORD_HOME_CHANNEL: "",
  DISCORD_ALLOWED_USERS: "2001,2002,2021,2022,2023,2025,2031,2032,2033",
  DISCORD_API_BASE: "https://discord.test/api/v10",
  DISCORD_ADMIN_USERS: "2009,2025",
  SLACK_BOT_TOKEN: SLACK_TEST.token,
  SLACK_SIGNING_SECRET: SLACK_TEST.secret,
  SLACK_HOME_CHANNEL: "",
  SLACK_ALLOWED_USERS: "U1001,U1002,U1021,U1022,U1023,U1025,U1031,U1032,U1033",
  SLACK_API_URL: "https://slack.test/api/",
  SLACK_ADMIN_USERS: "U1009,U1025",
  WHATSAPP_ACCESS_TOKEN: WHATSAPP_TEST.token,
  WHATSAPP_APP_SECRET: WHATSAPP_TEST.appSecret,
  WHATSAPP_VERIFY_TOKEN: WHATSAPP_TEST.verifyToken,
  WHATSAPP_PHONE_NUMBER_ID: WHATSAPP_TEST.phoneNumberId,
  WHATSAPP_BUSINESS_ACCOUNT_ID: "",
  WHATSAPP_HOME_CHANNEL: "",
  // 15550001001-15550001009: whatsapp tests; 15550001003 is never allowed; 15550001009 an admin.
  WHATSAPP_ALLOWED_USERS: "15550001001,15550001002,15550001004,15550001005,15550001006,15550001009,15550001021",
  WHATSAPP_ADMIN_USERS: "15550001005,15550001006,15550001009",
  WHATSAPP_API_BASE: "https://graph.whatsapp.test/v23.0",
  WHATSAPP_HANDOFF_TEMPLATE: "",
  MATRIX_HOMESERVER_URL: MATRIX_TEST.homeserver,
  MATRIX_AS_TOKEN: MATRIX_TEST.asToken,
  MATRIX_HS_TOKEN: MATRIX_TEST.hsToken,
  MATRIX_BOT_USER: MATRIX_TEST.bot,
  MATRIX_HOME_CHANNEL: "",
  // @alice, @bob: matrix tests; @mallory is never allowed; @admin may /sethome.
  MATRIX_ALLOWED_USERS: "@alice:example.org,@bob:example.org,@admin:example.org,@example:example.org",
  MATRIX_ADMIN_USERS: "@admin:example.org",
  RELAY_PLATFORMS: "",
  RELAY_BUFFER_LIMIT: "",
  RELAY_SECRETS: "",
  MCP_SERVERS: "",
  TOOL_TIMEOUT_MS: "",
  ATTACHMENT_MAX_BYTES: "",
  LLM_TRANSCRIBE_MODEL: "",
};

/**
 * Dependencies and JSON files load with no sourcemap at all. A workerd project's runtime
 * receives every module it runs from Vitest as text over one WebSocket, each with its map
 * inlined, sources included: measured for the relay project, 806 modules and 15.6 MB, of which
 * 8.4 MB were the maps of the 358 dependency modules (zod's compile.js alone: 94 KB of code,
 * 311 KB of map) and 0.5 MB those of the corpus' JSON files. A map of a dependency points into
 * its dist files, which a stack trace shows anyway; our own TypeScript keeps its maps.
 * (`{ mappings: "" }` is Rollup's "no map": Vite then inlines none.) It also ends the warnings
 * "Sourcemap for … points to missing source files" that dependencies whose maps name sources
 * they do not ship (the MCP SDK, @slack/web-api, discord-interactions) printed once per module.
 */
function withoutDependencySourcemaps(): Plugin {
  return {
    name: "hermes-edge:without-dependency-sourcemaps",
    enforce: "pre",
    load(id) {
      if (id.includes("?")) return null; // ?raw and the like: Vite's own
      const dependency = /\/node_modules\/.+\.(c|m)?js$/.test(id);
      if ((!dependency && !/\.json$/.test(id)) || !existsSync(id)) return null;
      const code = readFileSync(id, "utf8");
      return { code: dependency ? code.replace(/^\/\/# sourceMappingURL=.*$/gm, "") : code, map: { mappings: "" } };
    },
  };
}

/**
 * workers/lazy.ts imports "./lazy/<name>.js": at the edge, modules workers/lazy/build.mjs
 * builds and wrangler uploads beside the main one. Tests load their sources instead, built or not.
 */
function lazyModulesFromSource(): Plugin {
  return {
    name: "hermes-edge:lazy-modules-from-source",
    enforce: "pre",
    resolveId(source, importer) {
      const name = /^\.\/lazy\/([\w-]+)\.js$/.exec(source)?.[1];
      if (!name || !importer?.replace(/\?[\s\S]*$/, "").endsWith("/workers/lazy.ts")) return null;
      return path.join(import.meta.dirname, "workers", "lazy", `${name}.ts`);
    },
  };
}

/**
 * The workerd project's runtime gets every module through Vite (the test plugin sets
 * `server.deps.inline = true`): each is parsed, rewritten for Vite's module runner and sent
 * over a WebSocket. pdf.js (unpdf's serverless build, 1.7 MB in one file) is the largest by
 * far; left to workerd (the plugin's module fallback service reads it from disk and workerd
 * compiles it as an ES module, as it does at the edge), the first PDF read takes under 0.3 s
 * instead of 1.6 s, and the project's cold run (`vitest run --project worker`, no module
 * cache) 1-1.2 s less CPU in interleaved runs (27.9 against 28.7 s, 29.4 against 30.6 s; up to
 * 4 s in runs that were not interleaved). Runs after the plugin's own config hook, which would undo it.
 */
function pdfjsLoadedByWorkerd(): Plugin {
  return {
    name: "hermes-edge:pdfjs-loaded-by-workerd",
    enforce: "post",
    config(config) {
      const deps = (config as { test?: { server?: { deps?: { inline?: unknown } } } }).test?.server?.deps;
      // Said aloud rather than skipped: a test plugin that stops inlining every module has changed what this works around.
      if (deps?.inline !== true) throw new Error("pdfjsLoadedByWorkerd: the test plugin no longer sets test.server.deps.inline = true; review this plugin");
      deps.inline = [/^(?!.*\/node_modules\/unpdf\/)/];
    },
  };
}

// wrangler, inside the workerd projects' plugin, reads wrangler.toml and says it takes
// secrets from process.env and that API_TOKEN (a required secret) is missing: the tests
// pass it as a binding. Warnings and below are dropped there; errors still print. The e2e
// project's wrangler processes get the level the caller had (their output is kept apart).
// workerd's "read end of pipe was aborted" line, which the test plugin's own list of benign
// disconnects lacks (test/support/runtime-noise.ts).
dropRuntimeNoise(process.stdout);
dropRuntimeNoise(process.stderr);

const CALLER_WRANGLER_LOG = process.env.WRANGLER_LOG;
process.env.WRANGLER_LOG = "error";

/**
 * The workerd project: the Worker from wrangler.toml with test bindings, and the storage of its
 * relay configuration (test/worker/relay-config.ts): a D1 database, an R2 bucket and a namespace
 * per Durable Object class of its own, the classes exported by the test main module
 * (test/worker/entry.ts), which is the Worker's main module plus those classes.
 */
function workerProject() {
  return {
    plugins: [
      pdfjsLoadedByWorkerd(),
      cloudflareTest(async () => ({
        main: "./test/worker/entry.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: { ...WORKER_TEST_VARS, TEST_MIGRATIONS: await readD1Migrations(path.join(import.meta.dirname, "migrations")) },
          durableObjects: Object.fromEntries(Object.entries(RELAY_CLASSES).map(([binding, className]) => [binding, { className, useSQLite: true }])),
          d1Databases: { [RELAY_STORAGE.DB]: "relay-config-db" },
          r2Buckets: { [RELAY_STORAGE.FILES]: "relay-config-files" },
        },
      })),
    ],
    // One test file, all.test.ts, imports the suites (*.suite.ts): one task, so one runtime and
    // its storage for all of them (test/worker/suites.ts says why). Suites use their own
    // sessions, chats and users, and never assume the tables are empty.
    test: {
      name: "worker",
      include: ["test/worker/all.test.ts"],
      setupFiles: ["test/worker/setup.ts"],
      testTimeout: 10_000,
      isolate: false,
    },
  };
}

/**
 * The order projects start in (Vitest's own is by name: e2e, node, worker, which left the
 * worker project, the longest after e2e, to start last, alone at the end of the run). The e2e
 * file and the worker project's one file go first, one per worker; the Node files, cheap to
 * start anywhere, last, filling both workers. Within a project, Vitest's order (slowest first).
 */
const PROJECT_ORDER = ["e2e", "worker", "node"];
class ProjectOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const i = PROJECT_ORDER.indexOf(spec.project.name);
      return i < 0 ? PROJECT_ORDER.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b)); // stable: keeps Vitest's order within a project
  }
}

export default defineConfig({
  // Inline projects extend this config: the plugin applies to each of them.
  plugins: [withoutDependencySourcemaps(), lazyModulesFromSource()],
  test: {
    // One temporary directory for the run (TMPDIR of every process it starts), removed at its end
    // with whatever a dead worker left, and the e2e Workers' process groups stopped.
    globalSetup: ["test/support/run-dir.ts"],
    // Logs of passing tests are noise (hostile-input tests log every refusal); failures keep theirs.
    silent: "passed-only",
    // Projects run side by side, one per core: measured here, a third worker on two cores
    // made the whole run slower (and CPU-heavy tests flaky), not faster.
    maxWorkers: 2,
    sequence: { sequencer: ProjectOrder },
    projects: [
      workerProject(),
      {
        test: {
          name: "node",
          environment: "node",
          // Node loads the test files and the code they import itself (its own type stripping:
          // tsconfig's erasableSyntaxOnly keeps every file strippable), not through Vite's
          // transform and module runner. Measured for the project's 98 files with no Vitest
          // module cache: 28.2 s of CPU through Vite against 25.0 s natively with Node's compile
          // cache cold too (16.4 and 13.9 s wall), 30.9 against 21.5 s with it warm. Vite-only
          // features are not available here (import.meta.glob: test/support/corpus.ts reads
          // the corpus from disk in Node); vi.mock still works through Vitest's module loader.
          experimental: { viteModuleRunner: false },
          include: ["test/node/**/*.test.ts"],
          setupFiles: ["test/node/setup.ts"],
          // node:sqlite (the gateway's turn runtime) says it is experimental, once per process.
          execArgv: ["--disable-warning=ExperimentalWarning"],
          // Files share a worker (their modules load once): tests keep no state in module scope.
          isolate: false,
        },
      },
      {
        test: {
          name: "e2e",
          // As the node project: Node loads the modules itself.
          experimental: { viteModuleRunner: false },
          // "log" is wrangler's own default.
          env: { WRANGLER_LOG: CALLER_WRANGLER_LOG ?? "log" },
          environment: "node",
          include: ["test/e2e/**/*.test.ts"],
          setupFiles: ["test/node/setup.ts"],
          globalSetup: ["test/e2e/global-setup.ts"],
          execArgv: ["--disable-warning=ExperimentalWarning"],
          // One file (all.test.ts imports the suites) in one process: they share the
          // wrangler dev Workers (test/support/e2e.ts) instead of starting their own.
          pool: "forks",
          isolate: false,
          testTimeout: 20_000,
          hookTimeout: 90_000,
        },
      },
    ],
  },
});
