import { handoffThreadName } from "../../workers/conversations/handoff-texts.ts";
import { homeChannel, homeRefusal } from "../../workers/conversations/home.ts";
import { PLATFORM_LABEL, type PlatformName } from "../../workers/platforms/names.ts";
import type { PlatformAdapter, ReplyTarget, SessionSource } from "../../workers/platforms/types.ts";
import { settings } from "../../workers/settings.ts";
import type { HandoffDestination } from "./handoff-state.ts";
import type { SessionRecord } from "./record.ts";

/** An expected failure: the handoff is marked failed with this message. */
export class HandoffFailure extends Error {
  override readonly name = "HandoffFailure";
}

/** Where a claimed handoff goes: the chat (a fresh thread where it can), and the source and target a real message there has. */
export interface Place {
  dest: HandoffDestination;
  source: SessionSource;
  target: ReplyTarget;
  /** For people: "your Slack DM", "the Discord home channel". */
  label: string;
}

/** Who the destination's key is for in a chat that keys per user. */
function keyUser(env: Env, platform: PlatformName, setBy: string | null): string {
  if (setBy) return setBy;
  const allowed = settings(env).platforms[platform].allowed;
  const only = allowed.kind === "some" && allowed.ids.size === 1 ? [...allowed.ids][0] : undefined;
  return only ?? "handoff";
}

/**
 * Finds where a claimed handoff goes (SPEC section 4): a person's DM (`handoffDmUser`, a
 * fresh private topic where the platform has them), the requested chat, or the home
 * channel, read again at pickup (never a home a non-admin set), with a fresh thread there
 * when the platform can make one.
 */
export async function placeFor(env: Env, adapter: PlatformAdapter, rec: SessionRecord, log: (line: string, err?: unknown) => void): Promise<Place> {
  const platform = adapter.name;
  const label = PLATFORM_LABEL[platform];
  const title = rec.title ?? rec.id.slice(0, 8);
  const fresh = async (chatId: string) =>
    rec.handoffThread === 0
      ? null
      : adapter.createHandoffThread(chatId, handoffThreadName(title)).catch((err: unknown) => {
          log(`${platform}: no handoff thread, using the chat itself`, err);
          return null;
        });

  if (rec.handoffDmUser) {
    if (!adapter.directTarget) throw new HandoffFailure(`${label} cannot open a private chat with a user from here`);
    const user = rec.handoffDmUser;
    const dm = await adapter.directTarget(user);
    const topic = dm.topics ? await fresh(dm.chatId) : null;
    const place = topic ? await adapter.destination(topic.chatId, topic.threadId) : dm;
    const dest = topic ?? { chatId: dm.chatId, threadId: null };
    return { dest, source: { ...place.source, userId: user }, target: place.target, label: `your ${label} DM` };
  }

  const stored = rec.handoffChatId ? null : await homeChannel(env, platform);
  // Read again at pickup (it may have changed since the request): never a non-admin's chat.
  const refused = stored && homeRefusal(env, platform, stored);
  if (refused) throw new HandoffFailure(refused);
  const home = rec.handoffChatId
    ? { chatId: rec.handoffChatId, threadId: null, setBy: null }
    : stored
      ? { chatId: stored.chat_id, threadId: stored.thread_id, setBy: stored.set_by }
      : null;
  if (!home) throw new HandoffFailure(`no home channel configured for ${platform}; run /sethome in the destination chat first`);
  const thread = await fresh(home.chatId);
  const dest: HandoffDestination = thread ?? { chatId: home.chatId, threadId: home.threadId };
  const { source, target } = await adapter.destination(dest.chatId, dest.threadId);
  const origin = { ...source, userId: keyUser(env, platform, home.setBy) };
  // Outside threads a shared chat keys per user: the key must be someone's, or no real
  // message there would ever continue the session.
  if (origin.chatType !== "dm" && !origin.threadId && origin.userId === "handoff") {
    throw new HandoffFailure(
      `cannot tell whose session ${dest.chatId} should continue: send /sethome in that chat (its sender becomes the owner), or hand off into a thread`,
    );
  }
  return { dest, source: origin, target, label: rec.handoffChatId ? `${label} chat ${dest.chatId}` : `the ${label} home channel` };
}
