import { Hono } from "hono";
import { takeBatch } from "../conversations/batch.ts";
import { type IntakeResult, platformIntake, suggestions, takeIn } from "../conversations/intake.ts";
import { errorBody } from "../errors.ts";
import type { PlatformAdapter, PlatformEvent, SubIntake } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";
import { inbox } from "../conversations/stubs.ts";
import { logger } from "../log/index.ts";

const ok = () => new Response(null, { status: 200 });

/** One of 16 shards for a delivery key (FNV-1a of its UTF-16 units). */
function shardOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return h % 16;
}

/**
 * The webhook's answer for what the intake made of an event: taken in → the platform's ack
 * (Telegram and Slack 200, Discord's deferred "thinking…"); an answer or refusal with text →
 * that text in the response (Discord, Slack slash commands); anything else → a bare 200, so
 * the platform neither retries nor shows an error.
 */
export function webhookResponse(adapter: PlatformAdapter, event: PlatformEvent, result: IntakeResult): Response {
  if (result.kind === "accepted") return adapter.ack(event);
  const text = result.kind === "answered" || result.kind === "refused" ? result.text : undefined;
  return text === undefined ? ok() : (adapter.answerInline(event, text) ?? ok());
}

/**
 * `POST /webhooks/:platform`: Telegram, Discord, Slack and WhatsApp deliveries. The platform
 * must be enabled; the body is verified over its raw bytes before anything is parsed (401
 * otherwise); parsed, with no I/O, into an event (or a batch of them, WhatsApp), which the
 * intake takes in; its result becomes the platform's answer (a batch's: 200).
 * `GET /webhooks/:platform`: the subscription check of a platform that sends one (WhatsApp's
 * `hub.challenge`); 404 for a platform that is not enabled, 405 for one that sends none.
 */
export const webhookRoutes = new Hono<{ Bindings: Env }>()
  .get("/:platform", async (c) => {
    const platform = c.req.param("platform");
    const found = platformIntake(c.env, platform);
    if (found.kind !== "ready") return c.json(errorBody(found.code, found.message), 404);
    const { adapter } = found;
    if (!adapter.handshake) return c.json(errorBody("method_not_allowed", `${platform} webhooks are POSTed`), 405);
    const answer = await adapter.handshake(new URL(c.req.url).searchParams);
    if (answer.status !== 200) logger.child(platform).warn("subscription check refused");
    return answer;
  })
  .post("/:platform", async (c) => {
    const env = c.env;
    const platform = c.req.param("platform");
    const found = platformIntake(env, platform);
    if (found.kind !== "ready") return c.json(errorBody(found.code, found.message), 404);
    const { adapter } = found;
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const verified = await adapter.verify(c.req.raw.headers, raw, Date.now());
    if (!verified.ok) {
      logger.child(platform).warn(`webhook refused (${verified.reason})`);
      return c.json(
        errorBody("unauthorized", verified.reason === "stale" ? "webhook timestamp outside the accepted window" : "bad or missing webhook signature"),
        401,
      );
    }
    const ingest = adapter.ingest(new TextDecoder().decode(raw), c.req.raw.headers);
    const waitUntil = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
    const warm = adapter.warm?.();
    if (warm) waitUntil(warm.catch((err: unknown) => logger.child(platform).error("follow-up failed", { err })));
    if (ingest.kind === "suggest") return ingest.request.respond(await suggestions(env, ingest.request));
    if (ingest.kind === "batch") {
      await takeBatch({ env, adapter, batch: ingest, waitUntil });
      return ok();
    }
    if (ingest.kind !== "event") {
      // A signed delivery of another shape: Discord's is answered 400 by its adapter (it does not retry), the others 2xx so they are not retried.
      if (ingest.malformed) logger.child(platform).warn(`ignored a signed delivery that does not match the platform's schema (${ingest.malformed})`);
      return ingest.kind === "respond" ? ingest.response : ok();
    }
    const { event } = ingest;
    // Whether this delivery's response can carry text: asked of the adapter with an empty answer.
    const inline = adapter.answerInline(event, "") !== null;
    return webhookResponse(adapter, event, await takeIn({ env, adapter, event, inline, waitUntil }));
  })
  .all("/:platform/*", async (c) => {
    const env = c.env;
    const platform = c.req.param("platform");
    const found = platformIntake(env, platform);
    if (found.kind !== "ready") return c.json(errorBody(found.code, found.message), 404);
    const { adapter } = found;
    if (!adapter.serve) return c.json(errorBody("not_found", `${platform} webhooks have no paths below /webhooks/${platform}`), 404);
    const url = new URL(c.req.url);
    const path = url.pathname.slice(url.pathname.indexOf(`/${platform}/`) + platform.length + 1);
    const waitUntil = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
    // Deliveries done, kept by Inboxes of the platform (a transaction id is the platform's, not a chat's), 16 of them so none is hot.
    const record = (key: string) => inbox(env, `deliveries:${platform}:${shardOf(key)}`);
    const allowed = settings(env).platforms[adapter.name].allowed;
    const intake: SubIntake = {
      take: async (batch) => {
        await takeBatch({ env, adapter, batch, waitUntil });
      },
      done: (key) => record(key).seen(key),
      // After the answer: every event is stored by then (and deduped by its own id), so a mark lost with the isolate costs only a re-read.
      markDone: async (key) => {
        waitUntil(
          record(key)
            .firstSight(key)
            .catch((err: unknown) => logger.child(platform).warn("could not record a delivery as done", { err })),
        );
      },
      allowed: (userId) => isAllowed(allowed, userId),
    };
    const raw = new Uint8Array(await c.req.arrayBuffer());
    return adapter.serve({ method: c.req.method, path, query: url.searchParams, headers: c.req.raw.headers, raw }, intake);
  });
