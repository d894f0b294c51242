import { joinUrl } from "../../agent/index.ts";
import { PLATFORM_TIMEOUT_MS, type PlatformHealth } from "../types.ts";
import { errorMessage } from "../../log/index.ts";
import { fetchWithin } from "../deadline.ts";

/** Application flags (https://discord.com/developers/docs/resources/application#application-object-application-flags) that say Message Content Intent is on: GATEWAY_MESSAGE_CONTENT (1 << 18, verified bots) or GATEWAY_MESSAGE_CONTENT_LIMITED (1 << 19, under 100 servers). */
const MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);

/** Whether the application's `flags` say Message Content Intent is enabled ("unknown" when Discord did not send them). */
export function messageContentIntent(flags: unknown): "on" | "off" | "unknown" {
  if (typeof flags !== "number") return "unknown";
  return (flags & MESSAGE_CONTENT_FLAGS) !== 0 ? "on" : "off";
}

/** The portal switch the Gateway needs, and what happens without it. */
export const MESSAGE_CONTENT_FIX =
  "developer portal → your application → Bot → Privileged Gateway Intents: turn on Message Content Intent (without it DISCORD_GATEWAY=on is closed with 4014)";

/**
 * What Discord sees (GET /applications/@me with the bot token): the interactions endpoint
 * it sends to, which must be `<origin>/webhooks/discord`. Without a bot token the Worker
 * can only answer interactions, and cannot ask.
 */
export async function discordHealth(
  opts: { botToken: string | undefined; apiBase: string; fetch: typeof fetch; gateway: boolean },
  origin: string,
): Promise<PlatformHealth> {
  const expected = `${origin}/webhooks/discord`;
  const fix = `npx hermes-edge setup discord --url ${origin}`;
  if (!opts.botToken)
    return {
      detail: "no bot token: Discord cannot be asked",
      problems: [{ problem: "DISCORD_BOT_TOKEN is not set (handoff threads and this check need it)", fix: "npx wrangler secret put DISCORD_BOT_TOKEN" }],
    };
  try {
    const res = await fetchWithin(opts.fetch, PLATFORM_TIMEOUT_MS, joinUrl(opts.apiBase, "applications/@me"), {
      headers: { authorization: `Bot ${opts.botToken}` },
    });
    if (res.status === 401)
      return {
        detail: "token refused",
        problems: [{ problem: "Discord refused the bot token (401)", fix: "set the right token: npx wrangler secret put DISCORD_BOT_TOKEN" }],
      };
    if (!res.ok)
      return {
        detail: `HTTP ${res.status}`,
        problems: [{ problem: `Discord answered GET /applications/@me with HTTP ${res.status}`, fix: "try again later" }],
      };
    const app = (await res.json()) as { interactions_endpoint_url?: string | null; name?: string; flags?: number };
    const url = app.interactions_endpoint_url ?? "";
    const problems: PlatformHealth["problems"] = [];
    if (!url) problems.push({ problem: "Discord has no interactions endpoint for this application: slash commands go nowhere", fix });
    else if (url !== expected) problems.push({ problem: `Discord sends interactions to ${url}, not ${expected}`, fix });
    if (opts.gateway && messageContentIntent(app.flags) === "off")
      problems.push({
        problem: "DISCORD_GATEWAY=on but the application's Message Content Intent is off: messages arrive without their text",
        fix: MESSAGE_CONTENT_FIX,
      });
    return { detail: `application ${app.name ?? "?"} · interactions ${url || "(none)"}`, problems };
  } catch (err) {
    return { detail: "not reachable", problems: [{ problem: `cannot reach Discord: ${errorMessage(err)}`, fix: `try again; ${opts.apiBase} did not answer` }] };
  }
}
