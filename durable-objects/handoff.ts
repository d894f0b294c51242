import type { TurnOutcome } from "../workers/agent/index.ts";
import { isPlatformName } from "../workers/config.ts";
import { db } from "../workers/db/client.ts";
import { completeHandoff, type HandoffDestination } from "../workers/db/handoff.ts";
import { storedHome } from "../workers/db/platform-state.ts";
import { bindRoute } from "../workers/db/routes.ts";
import { getSession } from "../workers/db/sessions.ts";
import { adapterFor, platformSettings } from "../workers/platforms/registry.ts";
import { buildSessionKey } from "../workers/platforms/session-key.ts";
import type { ReplyTarget } from "../workers/platforms/types.ts";

/** A claimed handoff, as the scheduler hands it to the session's object. */
export interface HandoffJob {
  sessionId: string;
  requestedAt: number;
  platform: string;
  chatId: string | null;
  thread: boolean;
}

/** The synthetic user message of a handoff turn. */
export function handoffNotice(title: string, platform: string): string {
  return `[This session ("${title}") was just handed off from the CLI to this ${platform} chat. The conversation so far is the history above. Confirm briefly that you are here, and summarise where things stand so the user can carry on from this device.]`;
}

/** The name of the thread a handoff opens. */
export function handoffThreadName(title: string): string {
  return `Handoff: ${title}`;
}

/** Who the destination's session key is for in a chat that keys per user. */
function keyUser(env: Env, platform: "telegram" | "discord" | "slack", setBy: string | null): string {
  if (setBy) return setBy;
  const allowed = platformSettings(env, platform).allowed;
  return allowed.kind === "some" && allowed.ids.size === 1 ? [...allowed.ids][0]! : "handoff";
}

/** An expected failure: the handoff is marked failed with this message. */
export class HandoffFailure extends Error {
  override readonly name = "HandoffFailure";
}

/**
 * Carries a claimed handoff out (SPEC section 4): finds the destination (the requested
 * chat or the home channel), opens a fresh thread there when it can, binds the key that a
 * real message in that thread or chat will have to this session, runs the synthetic turn
 * whose reply goes there, and marks the row completed. Throws HandoffFailure otherwise.
 */
export async function carryOutHandoff(
  env: Env,
  job: HandoffJob,
  runTurn: (content: string, target: ReplyTarget, deliveryKey: string) => Promise<{ outcome: TurnOutcome; deliveryError: string | null }>,
): Promise<HandoffDestination> {
  const d = db(env);
  if (!isPlatformName(job.platform)) throw new HandoffFailure(`unknown platform '${job.platform}'`);
  const adapter = adapterFor(env, job.platform);
  if (!adapter) throw new HandoffFailure(`${job.platform} is not configured on this Worker`);
  const session = await getSession(d, job.sessionId);
  if (!session) throw new HandoffFailure(`session ${job.sessionId} no longer exists`);
  const stored = job.chatId ? null : await storedHome(d, job.platform);
  const fromEnv = platformSettings(env, job.platform).envHome;
  const home = job.chatId ? { chatId: job.chatId, threadId: null, setBy: null } : stored ? { chatId: stored.chatId, threadId: stored.threadId, setBy: stored.setBy } : fromEnv ? { ...fromEnv, setBy: null } : null;
  if (!home) throw new HandoffFailure(`no home channel configured for ${job.platform}; run /sethome in the destination chat first`);

  const title = session.title ?? session.id.slice(0, 8);
  let thread = null;
  if (job.thread) {
    thread = await adapter.createHandoffThread(home.chatId, handoffThreadName(title)).catch((err: unknown) => {
      console.warn(`${job.platform}: no handoff thread, using the chat itself`, err instanceof Error ? err.message : String(err));
      return null;
    });
  }
  const dest: HandoffDestination = thread ?? { chatId: home.chatId, threadId: home.threadId };
  const { source, target } = await adapter.sourceFor(dest.chatId, dest.threadId);
  const origin = { ...source, userId: keyUser(env, job.platform, home.setBy) };
  // Outside threads a shared chat keys per user: the key must be someone's, or no real
  // message there would ever continue the session.
  if (origin.chatType !== "dm" && !origin.threadId && origin.userId === "handoff") {
    throw new HandoffFailure(`cannot tell whose session ${dest.chatId} should continue: send /sethome in that chat (its sender becomes the owner), or hand off into a thread`);
  }
  await bindRoute(d, buildSessionKey(origin), job.sessionId, origin);

  const { outcome, deliveryError } = await runTurn(handoffNotice(title, job.platform), target, `handoff:${job.sessionId}:${job.requestedAt}`);
  if (outcome.error) throw new HandoffFailure(`the agent could not answer: ${outcome.error.message}`);
  if (deliveryError) throw new HandoffFailure(`could not deliver to ${job.platform}: ${deliveryError}`);
  if (!(await completeHandoff(d, job.sessionId, dest))) throw new HandoffFailure("the handoff was no longer running when it finished");
  return dest;
}
