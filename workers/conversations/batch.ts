import type { Context } from "hono";
import { errorBody } from "../errors.ts";
import { isPlatformName } from "../platforms/names.ts";
import { adapterFor } from "../platforms/registry.ts";
import type { Ingest, PlatformAdapter, PlatformEvent } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";
import { inbox, refusalKey } from "./stubs.ts";

type Batch = Extract<Ingest, { kind: "batch" }>;

/**
 * A delivery that batches updates (WhatsApp): each event goes the way a single one does
 * (`take`: refused, relayed or taken in by its key's Inbox, exactly once per delivery id),
 * each note is posted once per message to an allowed user, and then 200. A failure of one
 * event's Inbox fails the delivery (5xx): the platform redelivers it all, and what was
 * already taken in is a duplicate then.
 */
export async function takeBatch(
  c: Context<{ Bindings: Env }>,
  adapter: PlatformAdapter,
  batch: Batch,
  take: (event: PlatformEvent) => Promise<Response>,
): Promise<Response> {
  const platform = adapter.name;
  if (batch.malformed) console.warn(`${platform}: skipped part of a signed delivery that does not match the platform's schema (${batch.malformed})`);
  for (const line of batch.log) console.warn(line);
  const allowed = settings(c.env).platforms[platform].allowed;
  for (const event of batch.events) await take(event);
  for (const note of batch.notes) {
    if (!isAllowed(allowed, note.source.userId)) continue;
    if (await inbox(c.env, refusalKey(platform, note.source.chatId)).firstSight(`${platform}:${note.deliveryId}`)) {
      c.executionCtx.waitUntil(
        adapter.post(note.target, note.text).then(
          () => undefined,
          (err: unknown) => console.error(`${platform}: follow-up failed`, err instanceof Error ? err.message : String(err)),
        ),
      );
    }
  }
  return new Response(null, { status: 200 });
}

/**
 * `GET /webhooks/:platform`: the subscription check of a platform that sends one (WhatsApp's
 * `hub.challenge`); 404 for a platform that is not enabled, 405 for one that sends none.
 */
export async function handleHandshake(c: Context<{ Bindings: Env }>, platform: string): Promise<Response> {
  const adapter = isPlatformName(platform) ? adapterFor(c.env, platform) : null;
  if (!adapter) return c.json(errorBody("not_found", `${platform} is not enabled on this Worker`), 404);
  if (!adapter.handshake) return c.json(errorBody("method_not_allowed", `${platform} webhooks are POSTed`), 405);
  const answer = await adapter.handshake(new URL(c.req.url).searchParams);
  if (answer.status !== 200) console.warn(`${platform}: subscription check refused`);
  return answer;
}
