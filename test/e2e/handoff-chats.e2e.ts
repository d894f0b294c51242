import { spawn } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { harness, type Harness } from "../support/e2e.ts";
import type { ApiCall } from "../support/fake-platforms.ts";
import { conversation } from "../support/fake-llm.ts";
import { sl, tg } from "../support/fixtures.ts";
import { slackHeaders, telegramHeaders } from "../support/signing.ts";

/** One person across platforms, through the e2e Worker: Telegram DM → their Slack DM → parked for the CLI → `hermes-edge chat`. */
let h: Harness;

beforeAll(async () => {
  h = await harness();
  h.reset();
});

const telegram = (update: unknown) => fetch(`${h.worker.url}/webhooks/telegram`, { method: "POST", headers: telegramHeaders(), body: JSON.stringify(update) });

async function slack(body: string, type = "application/json") {
  return fetch(`${h.worker.url}/webhooks/slack`, { method: "POST", headers: await slackHeaders(body, undefined, undefined, type), body });
}

/** A slash command in the user's Slack DM; its answer is posted there (no https response_url on loopback). */
function slash(text: string) {
  const form = new URLSearchParams(sl.slash(text, "U1001", "DU1001"));
  form.set("response_url", "");
  return slack(form.toString(), "application/x-www-form-urlencoded");
}

/** Waits until `text` was said in `chat`, or fails naming it and the fake's last calls (a hang would otherwise only say "timed out"). */
async function seen(fake: Harness["telegram"] | Harness["slack"], chat: number | string, text: string, after = 0): Promise<ApiCall> {
  const what = `"${text}" in ${chat}`;
  const pred = (c: ApiCall) => said(chat, text)(c) && fake.calls.indexOf(c) >= after;
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const last = fake.calls.slice(-6).map((c) => `${c.path} ${JSON.stringify(c.body).slice(0, 160)}`);
      reject(new Error(`stuck waiting for ${what}; the last calls:\n${last.join("\n")}`));
    }, 15_000);
  });
  try {
    return await Promise.race([fake.waitFor(pred), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/** A message sent or edited in `chat` containing `text` (a streamed reply may show its end only in an edit). */
const said = (chat: number | string, text: string) => (c: ApiCall) =>
  /\/(sendMessage|editMessageText|chat\.postMessage|chat\.update)$/.test(c.path) &&
  String(c.body.chat_id ?? c.body.channel) === String(chat) &&
  String(c.body.text).includes(text);

/**
 * Sends a `/handoff` until it is taken: the reply the chat just got may still be ending its
 * turn in the session's object, and a handoff is refused while a turn runs ("busy"), as the
 * chat is told; the next try comes once that answer is in.
 */
async function handOff(send: () => Promise<unknown>, fake: Harness["telegram"] | Harness["slack"], chat: number | string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const before = fake.calls.length;
    await send();
    const answer = await Promise.race([seen(fake, chat, "Handing this session", before), seen(fake, chat, "The agent is busy", before)]);
    if (String(answer.body.text).startsWith("Handing this session")) return;
  }
  throw new Error(`the session in ${chat} stayed busy`);
}

describe("handoff between chats end to end", () => {
  it("a Telegram DM conversation moves to the same person's Slack DM, is answered there with its history, then continues in hermes-edge chat", async () => {
    await telegram(tg.dm("we are planning a trip to Porto", 1005));
    await seen(h.telegram, 1005, "echo: we are planning a trip to Porto");

    // Link the two accounts: a code on Telegram, used on Slack.
    await telegram(tg.command("link", "", 1005));
    const offer = await seen(h.telegram, 1005, "Your link code:");
    const code = /link code: (\S+)/.exec(String(offer.body.text))![1]!;
    await slash(`link ${code}`);
    await seen(h.slack, "DU1001", "Linked. You are also Telegram user 1005.");

    // /handoff slack: the notice answers in the Slack DM, the Telegram chat is told and let go.
    await handOff(() => telegram(tg.command("handoff", "slack", 1005)), h.telegram, 1005);
    await seen(h.slack, "DU1001", "handed off from Telegram to this slack chat");
    const moved = await seen(h.telegram, 1005, "This session moved to your Slack DM");
    const id = /resume (\S+) brings this one back/.exec(String(moved.body.text))![1]!;

    const dm = JSON.stringify(sl.dm("which neighbourhood for hotels?", "U1001", "DU1001"));
    await slack(dm);
    await seen(h.slack, "DU1001", "echo: which neighbourhood for hotels?");
    expect(conversation(h.llm.calls.at(-1)!.body)[0]!.content).toBe("we are planning a trip to Porto");

    // Parked for the operator's CLI, and taken up there with --resume latest.
    await handOff(() => slash("handoff cli"), h.slack, "DU1001");
    await seen(h.slack, "DU1001", "parked for the operator's CLI");
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, "cli", "bin.js"), "chat", "--resume", "latest"], {
      env: { ...process.env, HERMES_EDGE_URL: h.worker.url, HERMES_EDGE_TOKEN: h.worker.token, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdin.end("so what did we decide?\n");
    expect(await new Promise<number>((r) => child.on("close", (c) => r(c ?? -1)))).toBe(0);
    expect(err).toContain(`resumed ${id}`);
    expect(out).toBe("echo: so what did we decide?\n");
    const asked = conversation(h.llm.calls.at(-1)!.body).map((m) => m.content);
    expect(asked[0]).toBe("we are planning a trip to Porto");
    expect(asked).toContain("which neighbourhood for hotels?");
  });
});
