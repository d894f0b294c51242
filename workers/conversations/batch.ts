import { logger } from "../log/index.ts";
import type { DeliveryFailure, Ingest, PlatformAdapter } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";
import { type IntakeResult, takeIn } from "./intake.ts";
import { buildSessionKey } from "../platforms/session-key.ts";
import { inbox, refusalKey, sessionAgent } from "./stubs.ts";

type Batch = Extract<Ingest, { kind: "batch" }>;

/** A batching delivery, verified and parsed, with where follow-up work may outlive the answer. */
export interface BatchInput {
  env: Env;
  adapter: PlatformAdapter;
  batch: Batch;
  /** Keeps follow-up work (a note's post) alive after the answer; it never fails the delivery. */
  waitUntil: (work: Promise<unknown>) => void;
}

/**
 * A delivery that batches updates (WhatsApp): each event goes the way a single one does
 * ({@link takeIn} with no inline answer: refused, relayed or taken in by its key's Inbox,
 * exactly once per delivery id), each note is posted once per message to an allowed user,
 * each delivery failure is recorded by the session its chat is bound to (see {@link recordFailure}).
 * Returns each event's result, in order; the route answers 200 whatever they are. A
 * failure of one event's Inbox rejects (the route's 5xx): the platform redelivers it all,
 * and what was already taken in is a duplicate then.
 */
export async function takeBatch(input: BatchInput): Promise<IntakeResult[]> {
  const { env, adapter, batch, waitUntil } = input;
  const platform = adapter.name;
  const log = logger.child(platform);
  if (batch.malformed) log.warn(`skipped part of a signed delivery that does not match the platform's schema (${batch.malformed})`);
  for (const line of batch.log) log.warn(line);
  const results: IntakeResult[] = [];
  for (const event of batch.events) results.push(await takeIn({ env, adapter, event, inline: false, waitUntil }));
  const ps = settings(env).platforms[platform];
  if (!ps.gateway) for (const failure of batch.failures) await recordFailure(env, failure);
  const allowed = ps.allowed;
  for (const note of batch.notes) {
    if (!isAllowed(allowed, note.source.userId, note.source.userAltId)) continue;
    if (await inbox(env, refusalKey(platform, note.source.chatId)).firstSight(`${platform}:${note.deliveryId}`)) {
      waitUntil(adapter.post(note.target, note.text).catch((err: unknown) => log.error("follow-up failed", { err })));
    }
  }
  return results;
}

/**
 * Records that the platform did not deliver one of the bot's messages: the session the chat
 * is bound to marks the turn whose reply it showed undelivered. A message it did not send
 * (another session's, after /new or a handoff; an unknown id) changes nothing.
 */
async function recordFailure(env: Env, failure: DeliveryFailure): Promise<boolean> {
  const sessionId = await inbox(env, buildSessionKey(failure.source)).session();
  if (sessionId === null) return false;
  return (await sessionAgent(env, sessionId).deliveryFailed(failure.messageRef, failure.reason)).recorded;
}
