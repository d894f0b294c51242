import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { adminUsersSetting, allowedUsersSetting, homeChannelSetting, PLATFORM_INFO, PLATFORMS } from "../../workers/platforms/names.ts";
import { CATALOG, readCatalog, type SettingSpec } from "../../workers/settings/catalog.ts";

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), "utf8");
const entries = Object.entries(CATALOG) as Array<[string, SettingSpec]>;
const namesOf = (kind: "secret" | "var") =>
  entries
    .filter(([, e]) => e.kind === kind)
    .map(([n]) => n)
    .sort();
/** A family's name (`MCP_TOKEN_<NAME>`) stands for any name with its prefix (`MCP_TOKEN_DOCS`). */
const family = (name: string) => entries.find(([n]) => n.includes("<") && name.startsWith(n.slice(0, n.indexOf("<"))))?.[0] ?? name;

/**
 * README's configuration table, read as the old check did: rows whose first cell lists
 * backticked names (`| \`A\`, \`B\` | kind | meaning |`), under "## Configuration".
 */
function readmeTable(): Map<string, string> {
  const readme = read("README.md");
  const section = readme.slice(readme.indexOf("\n## Configuration"));
  const body = section.slice(0, section.indexOf("\n## ", 1) > 0 ? section.indexOf("\n## ", 1) : undefined);
  const rows = new Map<string, string>();
  for (const line of body.split("\n").filter((l) => l.startsWith("| `"))) {
    const [first = "", kind = ""] = line.split(" | ");
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_<>]*)`/g)) rows.set(m[1]!, kind.trim());
  }
  return rows;
}

describe("the settings catalog is what the docs and config files say", () => {
  it("README's configuration table has a row for every setting, with its kind (secret or var), and no row for a setting that is not in the catalog", () => {
    const table = readmeTable();
    expect(entries.filter(([n, e]) => table.get(n) !== e.kind).map(([n, e]) => `${n}: catalog ${e.kind}, README ${table.get(n) ?? "missing"}`)).toEqual([]);
    expect([...table.keys()].filter((n) => !(n in CATALOG))).toEqual([]);
  });

  it("wrangler.toml's [vars] are the catalog's vars, and their values there are understood", () => {
    const toml = read("wrangler.toml");
    const vars = /^\[vars\]\n([\s\S]*?)(?=^\[)/m.exec(toml)?.[1] ?? "";
    const given = Object.fromEntries([...vars.matchAll(/^([A-Z][A-Z0-9_]*)\s*=\s*"(.*)"$/gm)].map((m) => [m[1]!, m[2]!]));
    expect(Object.keys(given).sort()).toEqual(namesOf("var"));
    expect(readCatalog(given).problems).toEqual([]);
  });

  it(".dev.vars.example lists the catalog's secrets (a family by one example); workers/env.d.ts types them from the catalog", () => {
    const example = [...read(".dev.vars.example").matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => family(m[1]!));
    expect([...new Set(example)].sort()).toEqual(namesOf("secret"));
    expect(read("workers/env.d.ts")).toContain('import("./settings/catalog.ts").SecretName');
  });

  it("each platform's settings are in the catalog under its group: the required ones, allowed and admin users, the home channel", () => {
    for (const p of PLATFORMS) {
      const info = PLATFORM_INFO[p];
      const names = [...info.required, allowedUsersSetting(p), adminUsersSetting(p), homeChannelSetting(p), ...(info.homeThread ? [info.homeThread] : [])];
      for (const name of names) expect((CATALOG as Record<string, { group: string } | undefined>)[name]?.group, `${name} (${p})`).toBe(p);
    }
  });

  it("every entry says what it means, and a family's name is the only kind with <…> in it", () => {
    for (const [name, e] of entries) {
      expect(e.meaning.length, name).toBeGreaterThan(10);
      expect(/^[A-Z][A-Z0-9_]*(<NAME>)?$/.test(name), name).toBe(true);
    }
  });

  it("no code outside workers/settings* reads a setting from env: it gets catalog values passed in", () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const p = path.join(dir, name);
        if (statSync(p).isDirectory()) return p.endsWith(path.join("console", "assets")) ? [] : sources(p);
        return name.endsWith(".ts") ? [p] : [];
      });
    const names = entries.map(([n]) => n).filter((n) => !n.includes("<"));
    const read = new RegExp(`\\benv\\??\\.(${names.join("|")})\\b|\\benv\\[`);
    const bad = ["workers", "durable-objects"].flatMap((dir) =>
      sources(path.join(PROJECT_ROOT, dir))
        .map((f) => path.relative(PROJECT_ROOT, f))
        .filter((rel) => !rel.startsWith("workers/settings"))
        .flatMap((rel) =>
          readFileSync(path.join(PROJECT_ROOT, rel), "utf8")
            .split("\n")
            .flatMap((line, i) => (read.test(line) ? [`${rel}:${i + 1}: ${line.trim()}`] : [])),
        ),
    );
    expect(bad).toEqual([]);
  });
});
