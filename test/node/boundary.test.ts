import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { PLATFORM_INFO, PLATFORMS } from "../../workers/platforms/names.ts";

/** Platform SDKs stay inside their adapter folder (each platform's `info.ts` names its SDK); the core never imports an adapter. */
const SDKS: Record<string, string> = Object.fromEntries(PLATFORMS.flatMap((p) => (PLATFORM_INFO[p].sdk ? [[PLATFORM_INFO[p].sdk, p]] : [])));

/** A platform's name, as a regex alternative (every platform `names.ts` lists). */
const NAME = `(${PLATFORMS.join("|")})`;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    // The console's built bundle (workers/console/assets/app.js) is output, not source.
    if (statSync(p).isDirectory()) return name === "node_modules" || p.endsWith(path.join("console", "assets")) ? [] : sources(p);
    // Nor are the lazily loaded modules workers/lazy/build.mjs writes (workers/lazy/*.js); their sources are.
    return /\.(ts|js)$/.test(name) && !(name.endsWith(".js") && dir.endsWith(path.join("workers", "lazy"))) ? [p] : [];
  });
}

/**
 * The layers of the code and what each may import (relative imports; packages are checked
 * by the tests below). Named for what they do: a newcomer reads the layout from this table.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  retry: [], // backoff, Retry-After, which failures to retry: pure, every layer may use it
  agent: ["lazy", "retry", "version"], // the model core: pure (only its MCP client names the version and loads the SDK)
  format: [], // Markdown → each dialect: pure
  errors: [], // the API's error vocabulary
  names: ["info"], // the platform names: the list of each platform's info
  info: [], // workers/platforms/<name>/info.ts and link.ts: what is known of a platform without its adapter, pure
  lazy: [], // workers/lazy.ts and workers/lazy/: modules loaded on first use, uploaded beside the main one
  attachments: ["agent", "lazy"], // reading what people send: downloads, PDFs, speech to text, image parts
  security: [], // constant-time compares, HMAC, SHA-256
  version: [],
  log: [], // the logger and errorMessage: import-free, so every layer may use them (EVERYWHERE)
  json: [], // parse JSON and report the first zod issue
  settings: ["agent", "attachments", "names", "relay", "runtime"], // every setting, parsed once
  platforms: ["agent", "attachments", "format", "json", "names", "security"], // neutral types, parts, session keys
  adapter: ["agent", "attachments", "format", "info", "names", "platforms", "security"], // workers/platforms/<name>/
  registry: ["adapter", "names", "platforms", "settings"], // the one place adapters are picked
  links: ["names"], // links to a chat, per platform
  console: ["agent", "retry", "security"], // the web console's cookie, throttle and headers (its routes are http)
  web: ["agent"], // the console's front end, bundled for the browser (workers/console/web/): the SSE parser
  runtime: ["agent", "attachments", "names", "platforms", "retry"], // the one turn runtime (edge and gateway)
  relay: ["names", "platforms", "security"], // frames, tokens: both sides of the relay
  db: ["attachments", "links", "runtime", "security"], // security: link codes are kept as their SHA-256
  conversations: [
    "agent",
    "attachments",
    "db",
    "errors",
    "format",
    "json",
    "names",
    "platforms",
    "registry",
    "relay",
    "runtime",
    "security",
    "settings",
    "version",
  ],
  objects: [
    "agent",
    "attachments",
    "console",
    "conversations",
    "db",
    "errors",
    "format",
    "names",
    "platforms",
    "registry",
    "relay",
    "retry",
    "runtime",
    "security",
    "settings",
  ],
  http: [
    "agent",
    "attachments",
    "console",
    "conversations",
    "db",
    "errors",
    "json",
    "names",
    "platforms",
    "registry",
    "relay",
    "runtime",
    "security",
    "settings",
    "version",
  ],
  entry: ["*"], // workers/index.ts, app.ts, maintenance.ts: the composition root
  cli: ["adapter", "agent", "registry", "attachments", "format", "names", "platforms", "relay", "retry", "runtime", "version"],
};

/** Layers every layer may import: import-free helpers (the logger, `errorMessage`). */
const EVERYWHERE: readonly string[] = ["log"];

/** Layers one may import types from (erased at build time), beyond `MAY_IMPORT`: the CLI reads the API's JSON as the Worker types it. */
const MAY_IMPORT_TYPES: Record<string, readonly string[]> = { cli: ["conversations", "db"], platforms: ["settings"], info: ["platforms"] };

/** Relative imports that bring in only types (`import type { … } from "…"`). */
const typeImportsOf = (file: string) => new Set([...readFileSync(file, "utf8").matchAll(/^import type \{[^}]*\} from ["']([^"']+)["']/gm)].map((m) => m[1]!));

function layerOf(rel: string): string {
  const special: Record<string, string> = {
    "workers/settings.ts": "settings",
    "workers/errors.ts": "errors",
    "workers/security.ts": "security",
    "workers/version.ts": "version",
    "workers/json.ts": "json",
    "workers/platforms/registry.ts": "registry",
    "workers/platforms/all.ts": "registry",
    "workers/platforms/info.ts": "info",
    "workers/platforms/links.ts": "links",
    "workers/console/routes.ts": "http",
    "workers/platforms/names.ts": "names",
    "workers/lazy.ts": "lazy",
  };
  if (special[rel]) return special[rel]!;
  if (new RegExp(`^workers/platforms/${NAME}/(info|link|ids)\\.ts$`).test(rel)) return "info";
  if (new RegExp(`^workers/platforms/${NAME}/`).test(rel)) return "adapter";
  if (rel.startsWith("workers/console/web/")) return "web";
  if (/^workers\/[\w.-]+\.ts$/.test(rel)) return "entry";
  if (rel.startsWith("workers/")) return rel.split("/")[1]!;
  if (rel.startsWith("durable-objects/")) return "objects";
  if (rel.startsWith("cli/")) return "cli";
  return rel;
}

/** Follows every `MAY_IMPORT` edge: true when the layers can reach themselves. */
function cycles(): string[] {
  const found: string[] = [];
  const visit = (layer: string, trail: string[]) => {
    for (const next of MAY_IMPORT[layer] ?? []) {
      if (next === "*") continue;
      if (trail.includes(next)) found.push([...trail, next].join(" → "));
      else visit(next, [...trail, next]);
    }
  };
  for (const layer of Object.keys(MAY_IMPORT)) visit(layer, [layer]);
  return found;
}

/** True when `spec`, imported by `file`, is in the import-free log layer. */
const isLog = (file: string, spec: string) => spec.startsWith(".") && layerOf(path.relative(PROJECT_ROOT, path.resolve(path.dirname(file), spec))) === "log";

const importsOf = (file: string) => [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);

describe("module boundaries", () => {
  const files = ["workers", "durable-objects", "cli"].flatMap((d) => sources(path.join(PROJECT_ROOT, d)));

  it("imports only downwards between layers, and the layers have no cycle", () => {
    expect(cycles()).toEqual([]);
    const bad: string[] = [];
    for (const file of files) {
      const rel = path.relative(PROJECT_ROOT, file);
      const from = layerOf(rel);
      const allowed = MAY_IMPORT[from];
      if (!allowed) {
        bad.push(`${rel} is in no layer`);
        continue;
      }
      const typesOnly = typeImportsOf(file);
      for (const spec of importsOf(file).filter((s) => s.startsWith("."))) {
        const to = layerOf(path.relative(PROJECT_ROOT, path.resolve(path.dirname(file), spec)));
        const asType = typesOnly.has(spec) && (MAY_IMPORT_TYPES[from] ?? []).includes(to);
        const ok = to === from || allowed.includes("*") || allowed.includes(to) || EVERYWHERE.includes(to) || asType;
        if (!ok) bad.push(`${rel} (${from}) imports ${spec} (${to})`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("branches on a platform's name only in its adapter folder (and the format dialects)", () => {
    const branch = new RegExp(`(===|!==)\\s*["']${NAME}["']|["']${NAME}["']\\s*(===|!==)|case\\s+["']${NAME}["']`);
    const allowed = (rel: string) => new RegExp(`^workers/platforms/${NAME}/`).test(rel) || rel.startsWith("workers/format/");
    const bad = files.flatMap((f) => {
      const rel = path.relative(PROJECT_ROOT, f);
      if (allowed(rel)) return [];
      return readFileSync(f, "utf8")
        .split("\n")
        .flatMap((line, i) => (branch.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : []));
    });
    expect(bad).toEqual([]);
  });

  it("imports zod as a namespace (import * as z), which esbuild tree-shakes; `import { z }` brings in all of zod and its locales", () => {
    const whole = files.filter((f) => /^import \{[^}]*\bz\b[^}]*\} from "zod";?$/m.test(readFileSync(f, "utf8"))).map((f) => path.relative(PROJECT_ROOT, f));
    expect(whole).toEqual([]);
  });

  it("keeps every source file under 400 lines", () => {
    const lines = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    const long = files.map((f) => [path.relative(PROJECT_ROOT, f), lines(readFileSync(f, "utf8"))] as const).filter(([, n]) => n > 400);
    expect(long).toEqual([]);
  });

  it("imports each platform SDK only inside workers/platforms/<its platform>/", () => {
    const leaks: string[] = [];
    for (const file of files) {
      const rel = path.relative(PROJECT_ROOT, file);
      for (const spec of importsOf(file)) {
        const sdk = Object.keys(SDKS).find((s) => spec === s || spec.startsWith(`${s}/`));
        if (sdk && !rel.startsWith(`workers/platforms/${SDKS[sdk]}/`)) leaks.push(`${rel} imports ${spec}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it("keeps the application layer free of the HTTP framework: conversations/ returns results, http/ makes responses", () => {
    const app = files.filter((f) => path.relative(PROJECT_ROOT, f).startsWith("workers/conversations/"));
    expect(app.length).toBeGreaterThan(0);
    const hono = (s: string) => s === "hono" || s.startsWith("hono/");
    const bad = app.flatMap((f) =>
      importsOf(f)
        .filter(hono)
        .map((s) => `${path.relative(PROJECT_ROOT, f)} imports ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it("keeps the agent core free of runtime, SDK and adapter imports", () => {
    const core = files.filter(
      (f) => path.relative(PROJECT_ROOT, f).startsWith("workers/agent/") && !path.relative(PROJECT_ROOT, f).startsWith("workers/agent/mcp/"),
    );
    expect(core.length).toBeGreaterThan(0);
    // Pure libraries the core may use: no runtime APIs, no network (the retry module is pure too: see below).
    const pure = (f: string, s: string) => (s.startsWith("./") && !s.startsWith("./mcp/")) || s.startsWith("../retry/") || isLog(f, s);
    const bad = core.flatMap((f) =>
      importsOf(f)
        .filter((s) => !pure(f, s))
        .map((s) => `${path.relative(PROJECT_ROOT, f)} imports ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it("keeps the format module pure: its own files and markdown-it only, so it runs in workerd and Node", () => {
    const format = files.filter((f) => path.relative(PROJECT_ROOT, f).startsWith("workers/format/"));
    expect(format.length).toBeGreaterThan(0);
    const bad = format.flatMap((f) =>
      importsOf(f)
        .filter((s) => !s.startsWith("./") && s !== "markdown-it")
        .map((s) => `${path.relative(PROJECT_ROOT, f)} imports ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it("keeps the retry module pure: its own files only, so the agent core, the console and the gateway share it", () => {
    const retry = files.filter((f) => path.relative(PROJECT_ROOT, f).startsWith("workers/retry/"));
    expect(retry.length).toBeGreaterThan(0);
    const bad = retry.flatMap((f) =>
      importsOf(f)
        .filter((s) => !s.startsWith("./"))
        .map((s) => `${path.relative(PROJECT_ROOT, f)} imports ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it("imports the MCP SDK only in workers/agent/mcp/ (never its stdio client), its lazily loaded module and the gateway's mcp.ts", () => {
    const bad: string[] = [];
    for (const file of files) {
      const rel = path.relative(PROJECT_ROOT, file);
      for (const spec of importsOf(file)) {
        const sdk = spec.startsWith("@modelcontextprotocol/sdk");
        if (rel.startsWith("workers/agent/mcp/")) {
          const own =
            sdk || spec.startsWith("./") || /^\.\.\/[\w-]+\.ts$/.test(spec) || spec === "../../version.ts" || spec === "../../lazy.ts" || isLog(file, spec);
          if (spec.includes("/client/stdio") || !own) bad.push(`${rel} imports ${spec}`);
        } else if (rel === "workers/lazy/mcp.ts") {
          if (!sdk || spec.includes("/client/stdio")) bad.push(`${rel} imports ${spec}`);
        } else if (sdk && rel !== "cli/gateway/mcp.ts") bad.push(`${rel} imports ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
