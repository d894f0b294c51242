/**
 * Scenario (f): in a Telegram group, a Discord guild channel and a Slack channel, a second
 * member tries to reach the first member's sessions with /resume (a list, the id, an id
 * prefix, words of its text) and a CLI session (neither is an admin). Any answer that shows
 * or resumes one, and any of the second member's words in the first member's transcripts,
 * is a breach. Positive controls (the owner, the admin) resuming work, or their scenario
 * checks nothing: one that gets no answer counts as lost.
 */
import { dc, sl, tg } from "../../test/support/fixtures.ts";
import { discordHeaders, slackHeaders, telegramHeaders } from "../../test/support/signing.ts";
import { sessionWhere, transcript, until, type ListedSession, type Tally, type WorkerClient } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { quiet } from "./telegram-dm.ts";
import type { PlatformView } from "./view.ts";

/** What a member typed and the bot's answer(s) to it. */
async function answerTo(view: PlatformView, chat: string, send: () => Promise<void>, ms = 30_000): Promise<string> {
  const before = view.messages(chat).length;
  await send();
  await until(ms, `an answer in ${chat}`, () => (view.messages(chat).length > before ? true : undefined), 50);
  await quiet(view, 800);
  return view
    .messages(chat)
    .slice(before)
    .map((m) => m.plain)
    .join("\n");
}

/** The checks every platform shares, given how to send as the second member and as the owner. */
interface Probe {
  platform: string;
  tally: Tally;
  api: WorkerClient;
  /** The owner's sessions the second member must not reach, and words only the owner wrote. */
  victims: ListedSession[];
  secret: string;
  /** The second member's /resume with `args` (empty: the list), answered where they typed it. */
  resumeAsB(args: string): Promise<string>;
  /** The second member's ordinary message; resolves once answered. */
  talkAsB(text: string): Promise<void>;
  /** The owner resuming `id` from elsewhere (a DM): a positive control. */
  resumeAsOwner(id: string): Promise<string>;
  /** The platform's admin resuming a CLI session: a positive control (null: no admin configured there). */
  resumeAsAdmin: ((id: string) => Promise<string>) | null;
}

/** What the second member says in every round (their own sessions hold nothing else). */
const SECOND_MEMBER = "words of the second member";

async function probe(p: Probe): Promise<void> {
  const { tally } = p;
  const ids = p.victims.map((v) => v.id);
  const cli = (await p.api.json<{ session: { id: string } }>("/v1/sessions", { method: "POST", body: JSON.stringify({ title: `operator notes ${p.secret}` }) }))
    .session.id;
  /**
   * What an answer to the second member did: showed or resumed another's session, resumed
   * their own, or something else. The answer quotes what was typed ("No session matches
   * \"…\""): only the rest can leak.
   */
  const judge = async (answer: string, args: string): Promise<"breach" | "own" | "other"> => {
    const rest = answer.split(`"${args.slice(0, 100)}"`).join("");
    if ([...ids, cli].some((id) => rest.includes(id)) || rest.includes(p.secret)) return "breach";
    // A prefix can match the second member's own session from an earlier round, which is
    // theirs to resume; any other session resumed is a breach.
    const resumed = /Resumed (\S+)/.exec(rest)?.[1];
    if (resumed === undefined) return "other";
    const users = (await transcript(p.api, resumed)).filter((m) => m.role === "user");
    return users.length > 0 && users.every((m) => m.content?.includes(SECOND_MEMBER)) ? "own" : "breach";
  };
  const attempts = ["", ...ids, ...ids.map((id) => id.slice(0, 12)), p.secret, "operator notes", cli];
  for (const args of attempts) {
    tally.cases++;
    const answer = await p.resumeAsB(args);
    const verdict = await judge(answer, args);
    if (verdict === "breach")
      tally.add("breached", `${p.platform}: /resume ${args.slice(0, 30)} by another member answered ${JSON.stringify(answer.slice(0, 120))}`);
    else if (verdict === "other" && args !== "" && !answer.includes("No session matches"))
      tally.add("lost", `${p.platform}: /resume ${args.slice(0, 30)} answered ${JSON.stringify(answer.slice(0, 120))}`);
  }
  const mine = `${SECOND_MEMBER} ${p.secret.slice(-6)}`;
  tally.cases++;
  await p.talkAsB(mine);
  for (const id of [...ids, cli]) {
    const t = await transcript(p.api, id);
    if (t.some((m) => m.content?.includes(mine))) tally.add("breached", `${p.platform}: the second member's message reached session ${id}`);
  }
  // Positive controls: the owner and the admin may resume, so "No session matches" above meant something.
  tally.cases++;
  const own = await p.resumeAsOwner(ids[0]!);
  if (!own.includes(`Resumed ${ids[0]}`)) tally.add("lost", `${p.platform}: the owner's own /resume answered ${JSON.stringify(own.slice(0, 120))}`);
  if (!p.resumeAsAdmin) return;
  tally.cases++;
  const admin = await p.resumeAsAdmin(cli);
  if (!admin.includes(`Resumed ${cli}`))
    tally.add("lost", `${p.platform}: the admin's /resume of a CLI session answered ${JSON.stringify(admin.slice(0, 120))}`);
}

let seq = 0;

async function telegram(s: Stack, tally: Tally): Promise<void> {
  const group = -100900 - seq;
  const secret = `tg-secret-${++seq}-${Date.now() % 100000}`;
  const send = async (u: unknown) => void (await s.api.webhook("telegram", JSON.stringify(u), telegramHeaders()));
  const command = (name: string, args: string, userId: number, chatId: number) => {
    const u = chatId === userId ? tg.command(name, args, userId) : tg.group(`/${name}${args ? ` ${args}` : ""}`, { userId, chatId });
    (u.message as Record<string, unknown>).entities = [{ type: "bot_command", offset: 0, length: name.length + 1 }];
    return u;
  };
  await answerTo(s.telegram, String(group), () => send(tg.group(`${secret} my private plans`, { userId: 1001, chatId: group, mention: true })));
  const victim = await sessionWhere(s.api, "the first member's group session", (x) => x.session_key === `agent:main:telegram:group:${group}:1001`);
  await probe({
    platform: "telegram",
    tally,
    api: s.api,
    victims: [victim],
    secret,
    resumeAsB: (args) => answerTo(s.telegram, String(group), () => send(command("resume", args, 1002, group))),
    talkAsB: async (text) => void (await answerTo(s.telegram, String(group), () => send(tg.group(text, { userId: 1002, chatId: group, mention: true })))),
    resumeAsOwner: (id) => answerTo(s.telegram, "1001", () => send(command("resume", id, 1001, 1001))),
    resumeAsAdmin: (id) => answerTo(s.telegram, "1003", () => send(command("resume", id, 1003, 1003))),
  });
}

async function discord(s: Stack, tally: Tally): Promise<void> {
  const channel = String(3900 + ++seq);
  const secret = `dc-secret-${seq}-${Date.now() % 100000}`;
  const run = async (payload: ReturnType<typeof dc.command>) => {
    const body = JSON.stringify(payload);
    return answerTo(s.discord, `itok:${payload.token}`, async () => void (await s.api.webhook("discord", body, await discordHeaders(body))));
  };
  await run(dc.command("ask", { prompt: `${secret} guild plans` }, { userId: "2001", channelId: channel }));
  const victim = await sessionWhere(s.api, "the first member's channel session", (x) => x.session_key === `agent:main:discord:group:${channel}:2001`);
  await probe({
    platform: "discord",
    tally,
    api: s.api,
    victims: [victim],
    secret,
    resumeAsB: (args) => run(dc.command("resume", args ? { session: args } : {}, { userId: "2002", channelId: channel })),
    talkAsB: async (text) => void (await run(dc.command("ask", { prompt: text }, { userId: "2002", channelId: channel }))),
    resumeAsOwner: (id) => run(dc.command("resume", { session: id }, { userId: "2001", channelId: `${channel}9`, dm: true })),
    // No Discord admin is configured: CLI sessions stay out of reach there (checked above).
    resumeAsAdmin: null,
  });
}

async function slack(s: Stack, tally: Tally): Promise<void> {
  const channel = `C9${++seq}`;
  const dm = `D9${seq}`;
  const secret = `sl-secret-${seq}-${Date.now() % 100000}`;
  const event = async (payload: unknown) => {
    const body = JSON.stringify(payload);
    await s.api.webhook("slack", body, await slackHeaders(body));
  };
  // The first member: a prompt by slash command in the channel (a per-user session), and a DM.
  // Its response_url is not https, so nothing is sent anywhere but the channel (the fake).
  const slash = new URLSearchParams(sl.slash(`${secret} channel plans`, "U1001", channel));
  slash.set("response_url", `${s.slackUrl}/commands/not-https`);
  const form = slash.toString();
  await answerTo(
    s.slack,
    channel,
    async () => void (await s.api.webhook("slack", form, await slackHeaders(form, undefined, undefined, "application/x-www-form-urlencoded"))),
  );
  await answerTo(s.slack, dm, () => event(sl.dm(`${secret} dm plans`, "U1001", dm)));
  const inChannel = await sessionWhere(
    s.api,
    "the first member's channel session",
    (x) => x.source === "slack" && x.chat_id === channel && x.user_id === "U1001",
  );
  const inDm = await sessionWhere(s.api, "the first member's DM session", (x) => x.source === "slack" && x.chat_id === dm);
  await probe({
    platform: "slack",
    tally,
    api: s.api,
    victims: [inChannel, inDm],
    secret,
    resumeAsB: (args) => answerTo(s.slack, channel, () => event(sl.mention(`/resume ${args}`.trim(), "U1002", channel))),
    talkAsB: async (text) => void (await answerTo(s.slack, channel, () => event(sl.mention(text, "U1002", channel)))),
    resumeAsOwner: (id) => answerTo(s.slack, dm, () => event(sl.dm(`/resume ${id}`, "U1001", dm))),
    resumeAsAdmin: null,
  });
}

/** (f) shared-chat /resume on each platform, `rounds` times with fresh chats. */
export async function sharedResume(s: Stack, o: { rounds: number }, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    s.reset();
    await telegram(s, tally);
    await discord(s, tally);
    await slack(s, tally);
  }
}
