import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { harness, type Harness } from "../support/e2e.ts";
import type { E2eWorker } from "../support/bundled-worker.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The session data commands (set, usage, export, delete, import) run in-process against
 * the e2e Worker: the real Worker bundle, its objects and D1, over real HTTP.
 */
let h: Harness;
let worker: E2eWorker;

beforeAll(async () => {
  h = await harness();
  ({ worker } = h);
});

beforeEach(() => h.reset());

async function cli(args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  const m = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" }, tempDir("he-data-"));
  if (stdin !== undefined) m.stdin.end(stdin);
  const code = await createCli(args, m.io).run();
  return { code, out: m.out(), err: m.err() };
}

async function api(method: string, p: string, json?: unknown): Promise<Response> {
  return fetch(`${worker.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${worker.token}`, "content-type": "application/json" },
    ...(json ? { body: JSON.stringify(json) } : {}),
  });
}

async function sessionWithTurns(n: number): Promise<string> {
  const { session } = (await (await api("POST", "/v1/sessions", {})).json()) as { session: { id: string } };
  for (let i = 1; i <= n; i++) {
    h.llm.then({ kind: "text", chunks: [`reply ${i}`], usage: { prompt_tokens: 1000 * i, completion_tokens: 10 } });
    await (await api("POST", `/v1/sessions/${session.id}/turns`, { content: `question ${i}` })).text();
  }
  return session.id;
}

describe("hermes-edge sessions set / usage / export / delete / import", () => {
  it("round trip: set a title and instructions, see tokens, export, delete (asking first), import, export the same bytes", async () => {
    const id = await sessionWithTurns(3);

    const set = await cli(["sessions", "set", id, "--title", "data trip", "--instructions", "Be brief."]);
    expect(set).toMatchObject({ code: 0, err: "" });
    expect(set.out).toBe(`✓ data trip  ${id}\ninstructions: Be brief.\n`);
    const setJson = await cli(["sessions", "set", id, "--clear-instructions", "--json"]);
    expect(JSON.parse(setJson.out).session).toMatchObject({ id, title: "data trip", instructions: null });
    expect((await cli(["sessions", "set", id])).code).toBe(2);

    const list = await cli(["sessions", "list"]);
    expect(list.out).toMatch(new RegExp(`${id}  data trip  cli · 6 msgs · 6\\.0k tokens · \\d+s ago`));

    const usage = await cli(["usage", "--group", "session", "--json"]);
    expect(JSON.parse(usage.out).usage).toContainEqual(expect.objectContaining({ key: id, turns: 3, input_tokens: 6000, output_tokens: 30 }));
    const table = await cli(["usage", "--group", "session"]);
    expect(table.out.split("\n")[0]).toMatch(/^session\s+turns\s+input\s+output\s+total$/);
    expect(table.out).toMatch(new RegExp(`${id}\\s+3\\s+6,000\\s+30\\s+6,030`));
    expect((await cli(["usage", "--since", "yesterday"])).code).toBe(2);

    const dir = tempDir("he-export-");
    const exp = await cli(["sessions", "export", id, "--out", dir]);
    expect(exp.code).toBe(0);
    expect(readdirSync(dir)).toEqual([`${id}.jsonl`]);
    const file = path.join(dir, `${id}.jsonl`);
    const exported = readFileSync(file, "utf8");
    expect(exported.split("\n")[0]).toContain('"type":"session"');
    const md = await cli(["sessions", "export", id, "--format", "md"]);
    expect(md.out.split("\n")[0]).toBe("# data trip");
    expect(md.out).toContain("question 3");

    // On a terminal it asks; anything but yes keeps the session.
    const tty = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: worker.token, NO_COLOR: "1" }, tmpdir(), { tty: true });
    const asked = createCli(["sessions", "delete", id], tty.io).run();
    tty.stdin.write("n\n");
    expect(await asked).toBe(1);
    expect(tty.err()).toContain(`Delete "data trip" ${id} (6 messages, cli) everywhere`);
    expect(tty.err()).toContain("not deleted");
    expect((await cli(["sessions", "show", id])).code).toBe(0);
    const refused = await cli(["sessions", "delete", id]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("without --yes");
    const deleted = await cli(["sessions", "delete", id, "--yes"]);
    expect(deleted.out).toBe(`✓ deleted "data trip" ${id} (6 messages, cli)\n`);
    expect((await cli(["sessions", "show", id])).code).toBe(1);

    const imported = await cli(["sessions", "import", file]);
    expect(imported).toMatchObject({ code: 0, out: `✓ imported 1 session: ${id}\n` });
    const again = await cli(["sessions", "import", "-", "--json"], exported);
    expect(JSON.parse(again.out)).toEqual({ imported: [], skipped: [id] });
    expect((await cli(["sessions", "export", id])).out).toBe(exported);

    const bad = await cli(["sessions", "import", "-"], "this is not an export\n");
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/line 1/);
    expect((await cli(["sessions", "import", path.join(dir, "missing.jsonl")])).err).toContain("ENOENT");
  });

  it("exports every session active since a day, one file each, with progress on stderr", async () => {
    const ids = [await sessionWithTurns(1), await sessionWithTurns(1)];
    const dir = tempDir("he-export-all-");
    const today = new Date().toISOString().slice(0, 10);
    const r = await cli(["sessions", "export", "--since", today, "--out", dir, "--json"]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out) as { exported: string[]; files: string[] };
    for (const id of ids) expect(body.exported).toContain(id);
    expect(readdirSync(dir).sort()).toEqual(body.exported.map((id) => `${id}.jsonl`).sort());
    expect((await cli(["sessions", "export", "--since", "2999-01-01"])).err).toContain("no sessions to export");
    expect((await cli(["sessions", "export", "--since", "last week"])).code).toBe(2);
    expect((await cli(["sessions", "export", "--format", "pdf"])).code).toBe(2);
  });
});

describe("hermes-edge status", () => {
  it("against a local Worker: each part checked, no problems, exit code 0; --json is the report", async () => {
    const r = await cli(["status"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe(`hermes-edge status · ${worker.url}`);
    expect(lines).toContain("✓ Worker     hermes-edge 0.1.0");
    expect(lines).toContain("✓ token      accepted (HERMES_EDGE_TOKEN)");
    expect(lines).toContain("✓ settings   all understood");
    expect(lines).toContain("✓ model      openai fake: answers (no model list: HTTP 404)");
    expect(lines.find((l) => l.startsWith("✓ telegram"))).toContain("local Worker: the platform cannot reach it");
    const migrations = readdirSync(path.join(import.meta.dirname, "..", "..", "migrations")).filter((f) => f.endsWith(".sql")).length;
    expect(lines).toContain(`✓ D1         ${migrations}/${migrations} migrations applied`);
    expect(lines.at(-1)).toBe("no problems found");
    const json = JSON.parse((await cli(["status", "--json"])).out) as {
      reachable: boolean;
      token: { accepted: boolean };
      problems: unknown[];
      worker: { migrations: { missing: string[] }; setting_problems: unknown[] };
    };
    expect(json).toMatchObject({ reachable: true, token: { accepted: true }, problems: [], worker: { migrations: { missing: [] }, setting_problems: [] } });
  });

  it("a wrong token, or no Worker at all, is exit code 1 with the fix", async () => {
    const m = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: "wrong", NO_COLOR: "1" }, tmpdir());
    expect(await createCli(["status"], m.io).run()).toBe(1);
    expect(m.out()).toContain("✗ token      refused (HERMES_EDGE_TOKEN)");
    // The variable overrides a login, so the fix is the variable, not `login`.
    expect(m.out()).toContain("fix: HERMES_EDGE_TOKEN is set and overrides `hermes-edge login` and ./.dev.vars: set it to the Worker's API_TOKEN, or unset it");
    const gone = memoryIo({ HERMES_EDGE_URL: "http://127.0.0.1:9", HERMES_EDGE_TOKEN: "x", NO_COLOR: "1" }, tmpdir());
    expect(await createCli(["status"], gone.io).run()).toBe(1);
    expect(gone.out()).toContain("✗ Worker     not reachable");
    expect(gone.out()).toContain("fix: start it (npm start, npm run dev)");
  });
});
