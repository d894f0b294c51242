import { spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI, harness, type Harness } from "../support/e2e.ts";
import { tg } from "../support/fixtures.ts";
import { telegramHeaders } from "../support/signing.ts";
import { conversation } from "../support/fake-llm.ts";

/** `/handoff telegram` from the real CLI into a fake Telegram forum, through the e2e Worker. */
let h: Harness;
const FORUM = -100888;

beforeAll(async () => {
  h = await harness();
  h.reset();
  h.telegram.forums.add(String(FORUM));
});

function cli(args: string[]) {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, HERMES_EDGE_URL: h.worker.url, HERMES_EDGE_TOKEN: h.worker.token, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const seen = { out: "", err: "" };
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stdout.on("data", (d: Buffer) => ((seen.out += d.toString()), wake()));
  child.stderr.on("data", (d: Buffer) => ((seen.err += d.toString()), wake()));
  const exit = new Promise<number>((r) => child.on("close", (c) => r(c ?? -1)));
  const waitFor = async (text: string) => {
    while (!(seen.out + seen.err).includes(text)) await new Promise<void>((r) => waiters.push(r));
  };
  return { child, seen, exit, waitFor };
}

const webhook = (update: unknown) => fetch(`${h.worker.url}/webhooks/telegram`, { method: "POST", headers: telegramHeaders(), body: JSON.stringify(update) });

describe("handoff end to end", () => {
  it("moves a CLI session into a new Telegram topic, where the next message continues it; the CLI can come back", async () => {
    // The owner makes the forum the home channel.
    await webhook({
      ...tg.group("/sethome", { chatId: FORUM, userId: 1001 }),
      message: {
        ...tg.group("/sethome", { chatId: FORUM, userId: 1001 }).message,
        entities: [{ type: "bot_command", offset: 0, length: 8 }],
        chat: { id: FORUM, type: "supergroup", title: "Forum", is_forum: true },
      },
    });
    await h.telegram.waitFor((c) => c.path.endsWith("/sendMessage") && String(c.body.text).includes("home channel"));

    const chat = cli(["chat"]);
    chat.child.stdin.write("we are planning a trip to Lisbon\n");
    await chat.waitFor("echo: we are planning a trip to Lisbon");
    chat.child.stdin.write("/handoff telegram\n");
    expect(await chat.exit).toBe(0);
    const all = chat.seen.out + chat.seen.err;
    expect(all).toContain("Queued handoff of 'we are planning a trip to Lisbon' → telegram");
    expect(all).toMatch(/Handed off: the session now lives in telegram chat -100888, thread \d+\./);
    // "picked up" is said when the CLI's long poll finds the handoff running; a handoff the edge
    // finishes before that poll answers goes from pending straight to completed.
    if (all.includes("picked up; transferring…")) expect(all.indexOf("picked up; transferring…")).toBeLessThan(all.indexOf("Handed off:"));
    const id = /hermes-edge chat --resume (\S+)/.exec(all)![1]!;

    const topic = h.telegram.called("/createForumTopic")[0]!;
    expect(topic.body.chat_id).toBe(FORUM);
    const summary = await h.telegram.waitFor(
      (c) =>
        c.path.endsWith("/sendMessage") &&
        c.body.chat_id === FORUM &&
        c.body.message_thread_id !== undefined &&
        String(c.body.text).includes("handed off from the CLI"),
    );
    const threadId = Number(summary.body.message_thread_id);
    expect(threadId).toBeGreaterThan(0);

    // The next message in that topic continues the same session.
    await webhook(tg.topic("so what is the plan?", threadId, { userId: 1002, chatId: FORUM }));
    await h.telegram.waitFor((c) => c.path.endsWith("/sendMessage") && c.body.text === "echo: so what is the plan?");
    expect(conversation(h.llm.calls.at(-1)!.body)[0]!.content).toBe("we are planning a trip to Lisbon");

    // And back in the CLI, with a recap (on stderr: piped, stdout carries only replies).
    const back = cli(["chat", "--resume", id]);
    back.child.stdin.end("thanks\n");
    expect(await back.exit).toBe(0);
    expect(back.seen.err).toContain(`resumed ${id}`);
    expect(back.seen.err).toContain("you: so what is the plan?");
    expect(back.seen.out).toBe("echo: thanks\n");
  });

  it("headless: sessions handoff --json exits 0 with the completed handoff", async () => {
    const res = await fetch(`${h.worker.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.worker.token}` },
      body: JSON.stringify({ title: "headless" }),
    });
    const { session } = (await res.json()) as { session: { id: string } };
    const run = cli(["sessions", "handoff", session.id, "--to", "telegram", "--json"]);
    expect(await run.exit).toBe(0);
    expect(JSON.parse(run.seen.out)).toMatchObject({ handoff: { state: "completed", platform: "telegram", destination: { chat_id: String(FORUM) } } });
    const refused = cli(["sessions", "handoff", session.id, "--to", "irc"]);
    expect(await refused.exit).toBe(1);
    expect(refused.seen.err).toContain("unknown platform 'irc'");
  });
});
