import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveTarget } from "../../cli/client.ts";
import { styleFor } from "../../cli/io.ts";
import { allFlags, commandHelp, COMMANDS, mainHelp } from "../../cli/commands.ts";
import { completionScript } from "../../cli/completion.ts";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { CLI_VERSION, createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { freePort, serve } from "../support/http.ts";
import { tempDir } from "../support/temp.ts";

const io = memoryIo;

describe("hermes-edge CLI", () => {
  it("every command in the table has a handler and a --help naming each of its flags and subcommands", async () => {
    const main = io();
    expect(await createCli(["--help"], main.io).run()).toBe(0);
    for (const cmd of COMMANDS) {
      expect(main.out(), cmd.name).toMatch(new RegExp(`^  ${cmd.name}\\b`, "m"));
      const t = io();
      expect(await createCli([cmd.name, "--help"], t.io).run(), cmd.name).toBe(0);
      expect(t.out(), cmd.name).toBe(`${commandHelp(cmd)}\n`);
      expect(t.out()).toContain(`Usage: hermes-edge ${cmd.name}`);
      for (const f of allFlags(cmd)) expect(t.out(), `${cmd.name} --${f.name}`).toContain(`--${f.name}`);
      for (const s of cmd.subcommands ?? []) expect(t.out(), `${cmd.name} ${s.name}`).toMatch(new RegExp(`^  ${s.name}\\b`, "m"));
    }
  });

  it("the README shows the real --help", () => {
    const readme = readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
    expect(readme).toContain(`$ npx hermes-edge --help\n${mainHelp(CLI_VERSION)}\n\`\`\``);
  });

  it("bash completion offers the table's commands, subcommands, flags and flag values", () => {
    const cases: string[][] = [
      ["hermes-edge", ""],
      ["hermes-edge", "sessions", ""],
      ["hermes-edge", "sessions", "list", "--"],
      ["hermes-edge", "sessions", "handoff", "x", "--to", ""],
      ["hermes-edge", "chat", "--"],
      ["hermes-edge", "completion", ""],
    ];
    // One bash for every case (as a shell calls the function again and again), not a bash each.
    const call = (words: string[]) => `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _hermes_edge`;
    const calls = cases.map((words) => `${call(words)}; printf '%s\\n' "\${COMPREPLY[@]}"; echo '--end--'`);
    const r = spawnSync("bash", ["-c", `${completionScript("bash")}\n${calls.join("\n")}`], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    const [top, sessions, list, handoffTo, chat, completion, rest] = r.stdout.split("--end--\n").map((out) => out.trim().split("\n").filter(Boolean).sort());
    expect(rest).toEqual([]);
    expect(top).toEqual([...COMMANDS.map((c) => c.name), "--help", "-h", "--version", "-v"].sort());
    expect(sessions).toEqual(["--help", "-h", "delete", "export", "handoff", "import", "list", "messages", "set", "show"]);
    expect(list).toEqual(["--help", "--json", "--limit"]);
    expect(handoffTo).toEqual(["discord", "slack", "telegram"]);
    expect(chat).toEqual(["--help", "--no-wait", "--resume"]);
    expect(completion).toEqual(["--help", "-h", "bash", "fish", "zsh"]);
  });

  it("zsh and fish completion name every command, subcommand and flag; an unknown shell is exit code 2", async () => {
    for (const shell of ["zsh", "fish"] as const) {
      const t = io();
      expect(await createCli(["completion", shell], t.io).run()).toBe(0);
      expect(t.out()).toBe(completionScript(shell));
      for (const cmd of COMMANDS) {
        expect(t.out(), `${shell} ${cmd.name}`).toContain(cmd.name);
        for (const s of cmd.subcommands ?? []) expect(t.out(), `${shell} ${s.name}`).toContain(s.name);
        for (const f of cmd.flags) expect(t.out(), `${shell} --${f.name}`).toContain(shell === "zsh" ? `--${f.name}` : `-l ${f.name} `);
      }
    }
    const bad = io();
    expect(await createCli(["completion", "tcsh"], bad.io).run()).toBe(2);
    expect(bad.err()).toContain("no completion for 'tcsh'");
  });

  it("refuses unknown commands and options with exit code 2 and the usage", async () => {
    const a = io();
    expect(await createCli(["fly"], a.io).run()).toBe(2);
    expect(a.err()).toContain("unknown command 'fly'");
    const b = io();
    expect(await createCli(["sessions", "list", "--nope"], b.io).run()).toBe(2);
    expect(b.err()).toContain("unknown option '--nope'");
  });

  it("usage errors are not buried under the help, and --bogus gets our words, not Node's", async () => {
    const sessions = COMMANDS.find((c) => c.name === "sessions")!;
    for (const [argv, first] of [
      [["sessions", "list", "--bogus"], "error: unknown option '--bogus'"],
      [["sessions", "list", "--limit"], "error: option '--limit' needs a value"],
      [["sessions", "show"], 'error: sessions show needs a session id, title or "latest"'],
    ] as const) {
      const t = io();
      expect(await createCli([...argv], t.io).run(), argv.join(" ")).toBe(2);
      expect(t.err().trimEnd().split("\n"), argv.join(" ")).toEqual([first, `usage: hermes-edge ${sessions.synopsis}  (hermes-edge sessions --help for more)`]);
    }
    const fly = io();
    expect(await createCli(["fly"], fly.io).run()).toBe(2);
    expect(fly.err().trimEnd().split("\n")).toHaveLength(2);
  });

  it("says in one line that the Worker is unreachable", async () => {
    const port = await freePort();
    const t = io({ HERMES_EDGE_URL: `http://127.0.0.1:${port}`, HERMES_EDGE_TOKEN: "x" });
    expect(await createCli(["sessions", "list"], t.io).run()).toBe(1);
    expect(t.err().trim().split("\n")).toHaveLength(1);
    expect(t.err()).toContain(`cannot reach hermes-edge at http://127.0.0.1:${port}`);
  });

  it("explains a 503 from a Worker with no API_TOKEN", async () => {
    const server = await serve(() => Response.json({ error: { code: "not_configured", message: "API_TOKEN is not set on this Worker" } }, { status: 503 }));
    try {
      const t = io({ HERMES_EDGE_URL: server.url, HERMES_EDGE_TOKEN: "x" });
      expect(await createCli(["sessions", "list"], t.io).run()).toBe(1);
      expect(t.err()).toContain("is not configured: API_TOKEN is not set");
    } finally {
      await server.close();
    }
  });

  it("finds the local token in ./.dev.vars only for a loopback Worker with no HERMES_EDGE_TOKEN", () => {
    const dir = tempDir("he-cli-");
    writeFileSync(path.join(dir, ".dev.vars"), "# local\nAPI_TOKEN=from-file\n");
    const at = (env: Record<string, string>) => resolveTarget({ env, cwd: dir, configDir: path.join(dir, "no-config") });
    expect(at({})).toEqual({ baseUrl: "http://127.0.0.1:8787", token: "from-file", tokenSource: ".dev.vars" });
    expect(at({ HERMES_EDGE_TOKEN: "env" }).token).toBe("env");
    expect(at({ HERMES_EDGE_URL: "https://edge.example.com/" })).toEqual({ baseUrl: "https://edge.example.com", token: undefined, tokenSource: "none" });
  });

  it("uses colour only on a terminal without NO_COLOR", () => {
    expect(styleFor({ isTTY: true }, {}).red("x")).toBe("\x1b[31mx\x1b[39m");
    expect(styleFor({ isTTY: true }, { NO_COLOR: "" }).red("x")).toBe("x");
    expect(styleFor({ isTTY: false }, {}).red("x")).toBe("x");
  });
});
