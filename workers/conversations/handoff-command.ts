import { accountOn } from "../db/people.ts";
import { adminUsersSetting, isOperatorSource, isPlatformName, PLATFORM_LABEL, type PlatformName } from "../platforms/names.ts";
import type { CommandEvent, PlatformAdapter, SessionSource } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";
import { dmRefusal } from "./people.ts";
import { sessionAgent } from "./stubs.ts";

/** What `/handoff` runs with (a part of the command context the key's Inbox gives). */
interface CommandContext {
  env: Env;
  key: string;
  event: CommandEvent;
  adapter: PlatformAdapter;
  current(): string | null;
}

/** The destination of a handoff that parks the session for the operator's CLI. */
const CLI = "cli";

function usage(prefix: string): string {
  return `Usage: ${prefix}handoff <platform>|cli [home]: ${prefix}handoff slack moves this session to your Slack DM (link the accounts first with ${prefix}link); admins: ${prefix}handoff telegram home, ${prefix}handoff cli.`;
}

/** Why `platform` cannot take a handoff on this Worker, or null. */
function platformRefusal(env: Env, platform: PlatformName): string | null {
  const ps = settings(env).platforms[platform];
  const label = PLATFORM_LABEL[platform];
  if (!ps.enabled) return `${label} is not configured on this Worker.`;
  if (ps.gateway) return `${label}'s conversations run on a relay gateway, which keeps their transcripts: a session cannot be handed there from here.`;
  return null;
}

type SessionFacts = { source: string; user_id: string | null; thread_id: string | null; chat_type: string | null };

/**
 * Who may move this chat's session: the owner of a per-user session (their own DM, their
 * own session in a group), from any account linked to them; an admin for a shared one (a
 * thread everyone uses) or an operator's session resumed here.
 */
async function ownerRefusal(env: Env, source: SessionSource, s: SessionFacts, admin: boolean): Promise<string | null> {
  const setting = adminUsersSetting(source.platform);
  if (isOperatorSource(s.source) || s.user_id === null) return admin ? null : `This is the operator's session: only ${setting} may move it.`;
  if (s.thread_id !== null || s.chat_type === "thread")
    return admin ? null : `This session is shared (everyone in this thread uses it): only ${setting} may move it.`;
  if (s.source === source.platform && s.user_id === source.userId) return null;
  const theirs = await accountOn(env.DB, { platform: source.platform, userId: source.userId }, s.source);
  return theirs && theirs.userId === s.user_id ? null : "Only the owner of this session may move it.";
}

/**
 * `/handoff <platform>|cli [home]` in a chat (SPEC section 4, from any chat): checks the
 * place, the asker and the destination, then asks the session's object, which carries it
 * out with the same states and rules as a CLI handoff and, once it moved, unbinds this chat
 * and says where it went. A refused request changes nothing.
 */
export async function handoffCommand(ctx: CommandContext): Promise<string> {
  const { env, event } = ctx;
  const { source } = event;
  const prefix = ctx.adapter.commands.prefix;
  const [first = "", where = "", ...extra] = (event.args ?? "").trim().toLowerCase().split(/\s+/);
  if (!first || extra.length > 0 || (where !== "" && where !== "home")) return usage(prefix);
  const here = settings(env).platforms[source.platform];
  if (here.gateway)
    return `${PLATFORM_LABEL[source.platform]}'s conversations run on a relay gateway, which keeps their transcripts: they cannot be handed off from here.`;
  const admin = isAllowed(here.admins, source.userId, source.userAltId);
  const toCli = first === CLI;
  if (!toCli && !isPlatformName(first)) return `Unknown platform '${first.slice(0, 40)}'. ${usage(prefix)}`;
  if (toCli && where) return usage(prefix);
  if ((toCli || where === "home") && !admin)
    return `Only ${adminUsersSetting(source.platform)} may hand a session to ${toCli ? "the operator's CLI" : "a home channel"}; ${prefix}handoff <platform> moves it to your own DM there.`;
  const refused = isPlatformName(first) ? platformRefusal(env, first) : null;
  if (refused) return refused;

  const sessionId = ctx.current();
  const found = sessionId ? await sessionAgent(env, sessionId).describe() : null;
  if (!sessionId || !found?.ok) return "No session here to hand off yet: send a message first (or resume one).";
  const me = { platform: source.platform, userId: source.userId };
  const notYours = await ownerRefusal(env, source, found.session, admin);
  if (notYours) return notYours;
  if (toCli || where === "home") return request(ctx, sessionId, { platform: first, chatId: null, thread: true });
  // The same person's DM on the destination: the asker's own account there, or the one linked to it.
  const platform = first as PlatformName;
  const label = PLATFORM_LABEL[platform];
  const account = await accountOn(env.DB, me, platform);
  if (!account) return `You have no linked ${label} account: send ${prefix}link here for a code, then /link <code> to the bot on ${label}.`;
  if (platform === source.platform && source.chatType === "dm") return `This session is already in your ${label} DM.`;
  const notThere = dmRefusal(env, account);
  if (notThere) return `Not handed off: ${notThere}.`;
  return request(ctx, sessionId, { platform, chatId: null, thread: true, dmUser: account.userId });
}

async function request(ctx: CommandContext, sessionId: string, req: { platform: string; chatId: null; thread: boolean; dmUser?: string }): Promise<string> {
  const { env, event } = ctx;
  const { source } = event;
  const answer = await sessionAgent(env, sessionId).requestHandoff({ ...req, from: { key: ctx.key, source, target: event.target } });
  if (answer.ok) {
    const to = req.dmUser && isPlatformName(req.platform) ? `your ${PLATFORM_LABEL[req.platform]} DM` : answer.to;
    return `Handing this session to ${to}… I will say here when it has moved.`;
  }
  if (answer.code === "not_found") return "No session here to hand off yet: send a message first (or resume one).";
  if (answer.code === "turn_in_progress") return `The agent is busy here: wait for the reply (or ${ctx.adapter.commands.prefix}stop it), then hand off again.`;
  if (answer.code === "handoff_in_flight") return "A handoff of this session is already under way.";
  return `Not handed off: ${"message" in answer ? answer.message : answer.code}.`;
}
