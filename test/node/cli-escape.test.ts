import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { safeJsonText, safeText } from "../../cli/io.ts";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { serve, type LoopbackServer } from "../support/http.ts";

/** What a hostile platform user sent in a DM: a clipboard write (OSC 52), a window title, clear screen. */
const HOSTILE = "hello\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07\x1b]0;pwned\x1b\\\x1b[2J\x1b[H\x9b2J there";
/** Any control character or escape that would reach the terminal (newline and tab are text). */
const DRIVES_TERMINAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

const ID = "s_hostile1";
const session = {
  id: ID,
  title: HOSTILE,
  source: "telegram",
  running: false,
  handoff: null,
  model: "fake",
  session_key: "telegram:dm:111",
  started_at: 0,
  last_active_at: 0,
  message_count: 2,
  ended_at: null,
  end_reason: null,
};
const message = (role: string, content: string) => ({
  id: 1,
  role,
  content,
  tool_calls: null,
  tool_call_id: null,
  tool_name: null,
  finish_reason: null,
  created_at: 0,
  token_count: null,
  input_tokens: null,
  output_tokens: null,
  model: null,
  attachments: [],
});

let worker: LoopbackServer;
beforeAll(async () => {
  worker = await serve((req) => {
    const { pathname, searchParams } = new URL(req.url);
    if (pathname === "/v1/sessions") return Response.json({ sessions: [session] });
    if (pathname === `/v1/sessions/${ID}`) return Response.json({ session });
    if (pathname === `/v1/sessions/${ID}/messages`) return Response.json({ messages: [message("user", HOSTILE), message("assistant", `echo: ${HOSTILE}`)] });
    if (pathname === `/v1/sessions/${ID}/export`) {
      return searchParams.get("format") === "md"
        ? new Response(`# ${HOSTILE}\n\n${HOSTILE}\n`)
        : new Response(`${JSON.stringify({ session })}\n`.replace("\\u001b]0", "\x9d0"));
    }
    if (pathname === "/v1/usage") return Response.json({ usage: [{ key: HOSTILE, turns: 1, input_tokens: 1, output_tokens: 1 }] });
    return Response.json({ error: { code: "not_found", message: `no such thing ${HOSTILE}` } }, { status: 404 });
  });
});
afterAll(() => worker.close());

async function run(argv: string[], tty: boolean) {
  const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: "t" }, undefined, { tty });
  const code = await createCli(argv, t.io).run();
  return { code, out: t.out(), err: t.err() };
}

describe("escape codes from platform users never reach the operator's terminal", () => {
  it("a DM with OSC 52, a title change and clear screen is printed clean by sessions list, show and messages, on a terminal and in a pipe", async () => {
    for (const tty of [true, false]) {
      for (const argv of [
        ["sessions", "list"],
        ["sessions", "show", ID],
        ["sessions", "messages", ID],
        ["sessions", "list", "--json"],
        ["sessions", "show", ID, "--json"],
        ["usage"],
        ["sessions", "export", ID, "--format", "md"],
        ["sessions", "show", "nope"],
      ]) {
        const r = await run(argv, tty);
        const printed = (r.out + r.err).replace(/\x1b\[[0-9;]*m/g, ""); // our own colours on a terminal
        expect(printed, `${argv.join(" ")} (tty: ${tty})`).not.toMatch(DRIVES_TERMINAL);
        expect(printed, argv.join(" ")).not.toContain("52;c;");
        expect(printed, argv.join(" ")).not.toContain("pwned");
      }
    }
    const shown = await run(["sessions", "messages", ID], false);
    expect(shown.out).toContain("hello there");
  });

  it("a JSONL export printed to a pipe keeps what it says (controls escaped, not dropped)", async () => {
    const r = await run(["sessions", "export", ID], false);
    expect(r.out).not.toMatch(DRIVES_TERMINAL);
    const back = JSON.parse(r.out) as { session: { title: string } };
    expect(back.session.title.startsWith("hello\x1b]52;c;")).toBe(true);
  });

  it("the sanitiser removes whole sequences, 7-bit and 8-bit, and keeps newlines and tabs", () => {
    expect(safeText(HOSTILE)).toBe("hello there");
    expect(safeText("a\tb\nc\x1bcd\x1b(Be\x9d0;t\x9cf\x07")).toBe("a\tb\ncdef");
    expect(safeJsonText('"\x9b2J"')).toBe('"\\u009b2J"');
  });
});
