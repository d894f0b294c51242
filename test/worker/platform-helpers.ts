import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../workers/index.ts";
import { discordHeaders, slackHeaders, telegramHeaders } from "../support/signing.ts";

/** Delivers a webhook to the Worker and waits for the work it left in waitUntil. */
export async function deliver(platform: string, body: string | Uint8Array, headers: Record<string, string>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edge.test/webhooks/${platform}`, { method: "POST", headers, body }), env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

export const toTelegram = (update: unknown, headers = telegramHeaders()) => deliver("telegram", JSON.stringify(update), headers);

export async function toDiscord(interaction: unknown): Promise<Response> {
  const body = JSON.stringify(interaction);
  return deliver("discord", body, await discordHeaders(body));
}

export async function toSlack(payload: unknown, extra: Record<string, string> = {}): Promise<Response> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const type = typeof payload === "string" ? "application/x-www-form-urlencoded" : "application/json";
  return deliver("slack", body, { ...(await slackHeaders(body, undefined, undefined, type)), ...extra });
}

const agent = (id: string) => env.SESSION_AGENT.get(env.SESSION_AGENT.idFromName(id));

/** Waits until every session's object has no turn running or queued. */
export async function settle(): Promise<void> {
  const { results } = await env.DB.prepare("SELECT id FROM sessions").all<{ id: string }>();
  await Promise.all(results.map((r) => agent(r.id).idle()));
}

export async function routeOf(key: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT session_id FROM session_routes WHERE session_key = ?").bind(key).first<{ session_id: string }>();
  return row?.session_id ?? null;
}

export async function countRows(table: string): Promise<number> {
  return (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
}

export async function bind(key: string, sessionId: string): Promise<void> {
  await env.DB.prepare("INSERT OR REPLACE INTO session_routes (session_key, session_id, origin, bound, updated_at) VALUES (?, ?, '{}', 1, 0)").bind(key, sessionId).run();
}
