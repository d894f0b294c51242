/**
 * bench/handoff's platform → platform mode: `/handoff slack` typed in a Telegram DM, the
 * session moving to the same person's Slack DM (linked first with /link, untimed), measured
 * from the moment the webhook goes out: to its 200, to the notice turn's first words in the
 * Slack DM (`conversations.open`, bind, the turn), and to the "moved" line in the Telegram
 * chat (the handoff completed and the chat let go).
 */
import { sl, tg } from "../test/support/fixtures.ts";
import type { ApiCall } from "../test/support/fake-platforms.ts";
import { slackHeaders, telegramHeaders } from "../test/support/signing.ts";
import { benchWorker, fetchWithin, pool, within, type Fakes } from "./lib.ts";

export interface ChatHandoffTimes {
  /** The `/handoff` webhook's 200. */
  ack: number;
  /** The first post in the Slack DM. */
  arrived: number;
  /** The line in the Telegram chat saying where it went. */
  told: number;
}

const says = (chat: string, text: string) => (c: ApiCall) =>
  /\/(sendMessage|editMessageText|chat\.postMessage|chat\.update)$/.test(c.path) &&
  String(c.body.chat_id ?? c.body.channel) === chat &&
  String(c.body.text).includes(text);

/** `n` people (Telegram user and Slack user each), `c` at a time, on one production `wrangler dev`. */
export async function chatHandoffs(f: Fakes, n: number, c: number): Promise<ChatHandoffTimes[]> {
  const w = await benchWorker(f.vars);
  const post = (platform: string, body: string, headers: Record<string, string>) =>
    fetchWithin(`${w.url}/webhooks/${platform}`, { method: "POST", headers, body });
  const telegram = (update: unknown) => post("telegram", JSON.stringify(update), telegramHeaders());
  const wait = (p: Promise<ApiCall>, what: string) => within(p, 30_000, what);
  const out: ChatHandoffTimes[] = [];
  const people = Array.from({ length: n }, (_, i) => 7_000_000 + i);
  await pool(people, c, async (user) => {
    const chat = String(user);
    const dm = `DU${user}`; // the fake Slack's conversations.open names the DM after its user
    await telegram(tg.dm("plan a trip to Porto", user));
    await wait(f.telegram.waitFor(says(chat, "echo: plan a trip to Porto")), `${user}: the first reply`);
    await telegram(tg.command("link", "", user));
    const offer = await wait(f.telegram.waitFor(says(chat, "link code:")), `${user}: the link code`);
    const code = /link code: (\S+)/.exec(String(offer.body.text))?.[1] ?? "";
    const form = new URLSearchParams(sl.slash(`link ${code}`, `U${user}`, dm));
    form.set("response_url", "");
    await post("slack", form.toString(), await slackHeaders(form.toString(), undefined, undefined, "application/x-www-form-urlencoded"));
    await wait(f.slack.waitFor(says(dm, "Linked.")), `${user}: linked`);

    const t0 = performance.now();
    const res = await telegram(tg.command("handoff", "slack", user));
    const ack = performance.now() - t0;
    if (!res.ok) throw new Error(`${user}: /handoff answered ${res.status}`);
    await wait(f.slack.waitFor(says(dm, "handed off from Telegram")), `${user}: the notice in Slack`);
    const arrived = performance.now() - t0;
    await wait(f.telegram.waitFor(says(chat, "This session moved")), `${user}: the moved line`);
    out.push({ ack, arrived, told: performance.now() - t0 });
  });
  await w.stop();
  return out;
}
