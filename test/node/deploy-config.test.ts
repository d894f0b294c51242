import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CATALOG } from "../../workers/settings/catalog.ts";
import { describe, expect, it } from "vitest";
import { withoutSecretsTable, writeLocalDevConfig } from "../../cli/local-config.ts";
import { consoleLink, ensureDevToken, PROJECT_ROOT } from "../../cli/local.ts";
import { MIGRATIONS } from "../../workers/db/migrations.ts";
import { tempDir } from "../support/temp.ts";

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), "utf8");

describe("deployment configuration", () => {
  it("the Worker's list of D1 migrations (what `status` checks) is the migrations folder", () => {
    const files = readdirSync(path.join(PROJECT_ROOT, "migrations"))
      .filter((f) => f.endsWith(".sql"))
      .map((f) => f.replace(/\.sql$/, ""))
      .sort();
    expect([...MIGRATIONS]).toEqual(files);
  });

  it("wrangler.toml requires API_TOKEN on deploy; the local runner's copy drops only that table", () => {
    const toml = read("wrangler.toml");
    expect(toml).toMatch(/^\[secrets\]\nrequired = \["API_TOKEN"\]$/m);
    const root = tempDir("he-local-config-");
    writeFileSync(path.join(root, "wrangler.toml"), toml);
    const copy = readFileSync(writeLocalDevConfig(root), "utf8");
    expect(path.dirname(writeLocalDevConfig(root))).toBe(root);
    const removed = toml.split("\n").filter((l) => !copy.split("\n").includes(l));
    expect(removed).toEqual(["[secrets]", 'required = ["API_TOKEN"]']);
    expect(withoutSecretsTable('a = 1\n[secrets]\nrequired = ["X"]\n\n# vars\n[vars]\nB = ""\n[secrets]\n[[d1_databases]]\n')).toBe(
      'a = 1\n\n# vars\n[vars]\nB = ""\n[[d1_databases]]\n',
    );
  });

  it(".dev.vars.example lists every secret, each with its comment; only API_TOKEN is left uncommented (the deploy button asks for those)", () => {
    const secrets = Object.entries(CATALOG).flatMap(([name, e]) => (e.kind === "secret" && !name.includes("<") ? [name] : []));
    expect(secrets).toContain("RELAY_SECRETS");
    const lines = read(".dev.vars.example").split("\n");
    for (const name of [...secrets, "MCP_TOKEN_"]) {
      const i = lines.findIndex((l) => new RegExp(`^(# )?${name}[A-Z_]*=$`).test(l));
      expect(i, name).toBeGreaterThan(0);
      expect(lines[i - 1], `${name}'s comment`).toMatch(/^# \S/);
    }
    expect(lines.filter((l) => /^[A-Z]/.test(l))).toEqual(["API_TOKEN="]);
    expect(read(".dev.vars.example")).toContain("openssl rand -base64 32");
  });

  it("npm start fills an empty API_TOKEN= in place (a copied .dev.vars.example) and keeps a set one", () => {
    const root = tempDir("he-devvars-");
    writeFileSync(path.join(root, ".dev.vars"), "# x\nAPI_TOKEN=\nLLM_API_KEY=k\n");
    const first = ensureDevToken(root);
    expect(first.created).toBe(true);
    expect(readFileSync(path.join(root, ".dev.vars"), "utf8")).toBe(`# x\nAPI_TOKEN=${first.token}\nLLM_API_KEY=k\n`);
    expect(ensureDevToken(root)).toEqual({ token: first.token, created: false });
  });

  it("npm start's console link carries the token in the fragment only (never sent to the server), escaped", () => {
    const link = new URL(consoleLink("http://127.0.0.1:8787", "a+b/c="));
    expect(link.pathname + link.search).toBe("/");
    expect(link.hash).toBe("#token=a%2Bb%2Fc%3D");
    expect(consoleLink("http://127.0.0.1:8787", undefined)).toBe("http://127.0.0.1:8787/");
  });
});
