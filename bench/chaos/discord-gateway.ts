/**
 * Scenario (o): Discord's Gateway (DISCORD_GATEWAY=on) under faults, against the fake
 * Gateway on loopback (test/support/fake-discord-gateway.ts). Each round, `parallel` DMs:
 *   1. the socket killed mid-reply: every turn streaming (held), the socket dropped, a second
 *      message per chat sent while it is down; the object must resume on its own (Discord
 *      replays the second messages) and every answer must show once, in full;
 *   2. the object restarted: wrangler killed with kill -9 mid-turn, messages sent while it is
 *      down; after the restart (nothing nudged but the restart's health check, the isolate's
 *      first request) the object resumes from its stored sequence number.
 */
import { FakeDiscordGateway } from "../../test/support/fake-discord-gateway.ts";
import { checkChat } from "./check.ts";
import type { Conversation } from "./chats.ts";
import { onCleanup, sessionWhere, until, within, type Tally } from "./harness.ts";
import type { Stack } from "./stack.ts";
import type { SeenCall } from "./view.ts";
import { all } from "./telegram-dm.ts";

const HOLD_MS = 180_000;
const RECOVERY_MS = 120_000;
/** In DISCORD_ALLOWED_USERS of the chaos stack. */
const USER = { id: "2001", username: "chaos", global_name: "Chaos" };

let channelSeq = 0;

/** The fake Gateway, started before the stack so `GET /gateway/bot` names it from the Worker's first request. */
export async function gatewayRig(): Promise<FakeDiscordGateway> {
  const gw = await new FakeDiscordGateway().start();
  onCleanup(() => void gw.stop());
  return gw;
}

interface Chat extends Conversation {
  say(text: string): void;
}

function dmChat(s: Stack, gw: FakeDiscordGateway): Chat {
  const channel = String(4900000 + ++channelSeq);
  let n = 0;
  return {
    platform: "discord",
    view: s.discord,
    chat: channel,
    session: () => sessionWhere(s.api, `the session of Discord DM ${channel}`, (x) => x.session_key === `agent:main:discord:dm:${channel}`),
    say: (text) => {
      gw.dispatch("MESSAGE_CREATE", {
        id: `${channel}${String(++n).padStart(3, "0")}`,
        channel_id: channel,
        type: 0,
        content: text,
        author: USER,
        mentions: [],
      });
    },
  };
}

/** Until a typing call in `channel` follows the bot's first post there. */
function settledAfterPost(s: Stack, channel: string): Promise<true> {
  const isPost = (c: SeenCall) => c.method === "POST" && c.path.endsWith(`/channels/${channel}/messages`);
  return until(30_000, `a typing refresh in channel ${channel}`, () => {
    const post = s.discord.calls.findIndex(isPost);
    return post >= 0 && s.discord.calls.slice(post + 1).some((c) => c.path.endsWith(`/channels/${channel}/typing`)) ? true : undefined;
  });
}

/** Until the object has a session on the fake (it connects at the Worker's first request). */
function connected(gw: FakeDiscordGateway): Promise<void> {
  return within(
    60_000,
    gw.until(() => gw.live() !== null && gw.session() !== null),
    "the Gateway object connected",
  );
}

export async function gatewayFaults(s: Stack, gw: FakeDiscordGateway, o: { rounds: number; parallel: number }, tally: Tally): Promise<void> {
  for (let r = 0; r < o.rounds; r++) {
    for (const fault of ["socket dropped mid-reply", "wrangler kill -9 mid-reply"] as const) {
      s.reset();
      await connected(gw);
      const chats = Array.from({ length: o.parallel }, () => dmChat(s, gw));
      const gates = chats.map(() => s.llm.hold(["part one "], ["and part two"], HOLD_MS));
      const first = chats.map((_, i) => `chaos o ${r}.${i} first (${fault})`);
      chats.forEach((c, i) => c.say(first[i] ?? ""));
      await all(
        60_000,
        "o: every reply streaming",
        chats.map((c) => s.discord.shows(c.chat, "part one")),
      );
      const resumesBefore = gw.resumes;
      if (fault === "socket dropped mid-reply") gw.live()?.drop();
      else {
        // As in (a): killed once each reply's first message is stored (a typing refresh follows
        // its post), not in the instant between Discord creating it and the object noting its id.
        await all(
          60_000,
          "o: a typing refresh after each post",
          chats.map((c) => settledAfterPost(s, c.chat)),
        );
        await s.worker.crash();
      }
      await within(
        30_000,
        gw.until(() => gw.live() === null),
        "the socket closed",
      );
      const second = chats.map((_, i) => `chaos o ${r}.${i} second (${fault})`);
      // Sent while the bot is away: only a resume brings them.
      chats.forEach((c, i) => c.say(second[i] ?? ""));
      if (fault === "wrangler kill -9 mid-reply") await within(90_000, s.worker.restart(), "wrangler dev restarting");
      for (const g of gates) g.release();
      await within(
        RECOVERY_MS,
        gw.until(() => gw.resumes > resumesBefore),
        "the object resumed",
      );
      // A stream held across kill -9 died with the Worker: the turn runs again and takes the default answer (the echo).
      const firstAnswer = (i: number) => (fault === "socket dropped mid-reply" ? "part one and part two" : `echo: ${first[i]}`);
      await Promise.all(
        chats.map((c, i) =>
          checkChat(
            s.api,
            c,
            tally,
            [
              { text: first[i] ?? "", expected: firstAnswer(i) },
              { text: second[i] ?? "", expected: `echo: ${second[i]}` },
            ],
            RECOVERY_MS,
          ),
        ),
      );
    }
  }
  tally.info.push(`o: ${gw.identifies} identify, ${gw.resumes} resumes, ${gw.peers.length} connections`);
}
