import { joinUrl } from "../../agent/index.ts";
import { DISCORD_COMMANDS } from "./parse.ts";
import { messageContentIntent } from "./health.ts";
import { errorMessage } from "../../log/index.ts";
import { line, type SetupContext, type SetupReport } from "../module.ts";
import { INTENT_BITS } from "./gateway/protocol.ts";
import { MESSAGE_CONTENT_FIX } from "./health.ts";

/**
 * The permissions the bot asks for when invited, by Discord's bit numbers
 * (https://discord.com/developers/docs/topics/permissions): what replies, handoff threads
 * and the messages in them need. Viewing channels comes from the server's @everyone role.
 */
export const DISCORD_BOT_PERMISSIONS = [
  { name: "Send Messages", bit: 11 },
  { name: "Embed Links", bit: 14 },
  { name: "Attach Files", bit: 15 },
  { name: "Read Message History", bit: 16 },
  { name: "Create Public Threads", bit: 35 },
  { name: "Send Messages in Threads", bit: 38 },
] as const;

/** The permission integer of {@link DISCORD_BOT_PERMISSIONS}: the sum of 2^bit, as a decimal string. */
export function discordPermissionInteger(): string {
  return DISCORD_BOT_PERMISSIONS.reduce((sum, p) => sum | (1n << BigInt(p.bit)), 0n).toString();
}

/** The URL that adds the bot to a server: scopes `bot` and `applications.commands`, and the permissions. */
export function discordInviteUrl(applicationId: string): string {
  const q = new URLSearchParams({ client_id: applicationId, scope: "bot applications.commands", permissions: discordPermissionInteger() });
  return `https://discord.com/oauth2/authorize?${q}`;
}

export interface DiscordSetupResult {
  applicationId: string;
  /** Where to add the bot to a server. */
  inviteUrl: string;
  commands: string[];
  interactionsUrl: string;
  /** Whether Discord accepted the interactions endpoint (it PINGs the URL first). */
  endpointSet: boolean;
  endpointError: string | null;
  /** Message Content Intent, from the application's flags (DISCORD_GATEWAY=on needs it): "unknown" when Discord did not say. */
  messageContent: "on" | "off" | "unknown";
}

/** A bot token's first part is the bot's user id (= the application id), base64-encoded. */
export function applicationIdFromToken(token: string): string | null {
  const first = token.split(".")[0];
  if (!first) return null;
  try {
    const id = atob(first.replace(/-/g, "+").replace(/_/g, "/"));
    return /^\d{5,}$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * Registers the slash commands (a bulk overwrite, so re-running is safe) and tries to set
 * the interactions endpoint URL, which Discord only accepts once the Worker answers its PING.
 */
export async function setupDiscord(opts: {
  botToken: string;
  applicationId: string;
  workerUrl: string;
  apiBase: string;
  fetch: typeof fetch;
}): Promise<DiscordSetupResult> {
  const headers = { authorization: `Bot ${opts.botToken}`, "content-type": "application/json" };
  const interactionsUrl = `${opts.workerUrl.replace(/\/+$/, "")}/webhooks/discord`;
  let res: Response;
  try {
    res = await opts.fetch(joinUrl(opts.apiBase, `applications/${opts.applicationId}/commands`), {
      method: "PUT",
      headers,
      body: JSON.stringify(DISCORD_COMMANDS),
    });
  } catch (err) {
    throw new Error(`cannot reach Discord at ${opts.apiBase}: ${errorMessage(err)}`);
  }
  if (!res.ok) {
    const detail = ((await res.json().catch(() => ({}))) as { message?: string }).message ?? "";
    const hint = res.status === 401 ? " (is DISCORD_BOT_TOKEN right?)" : res.status === 403 || res.status === 404 ? " (is DISCORD_APPLICATION_ID right?)" : "";
    throw new Error(`Discord refused the command registration: HTTP ${res.status} ${detail}${hint}`.trim());
  }
  const registered = (await res.json()) as Array<{ name: string }>;
  let endpointSet = false;
  let endpointError: string | null = null;
  const patch = await opts
    .fetch(joinUrl(opts.apiBase, "applications/@me"), { method: "PATCH", headers, body: JSON.stringify({ interactions_endpoint_url: interactionsUrl }) })
    .catch((err: unknown) => err as Error);
  if (patch instanceof Error) endpointError = patch.message;
  else if (patch.ok) endpointSet = true;
  else endpointError = `HTTP ${patch.status} ${((await patch.json().catch(() => ({}))) as { message?: string }).message ?? ""}`.trim();
  // The Gateway's privileged intent is a switch in the portal; the application's flags say whether it is on.
  const app = await opts
    .fetch(joinUrl(opts.apiBase, "applications/@me"), { headers })
    .then(async (r) => (r.ok ? ((await r.json()) as { flags?: unknown }) : {}))
    .catch(() => ({}) as { flags?: unknown });
  return {
    applicationId: opts.applicationId,
    inviteUrl: discordInviteUrl(opts.applicationId),
    messageContent: messageContentIntent(app.flags),
    commands: registered.map((c) => c.name),
    interactionsUrl,
    endpointSet,
    endpointError,
  };
}

/** `hermes-edge setup discord`: registers the commands, sets the endpoint, prints the invite link. */
export async function discordSetupSteps(ctx: SetupContext): Promise<SetupReport> {
  const { DISCORD_BOT_TOKEN: botToken } = ctx.need({ DISCORD_BOT_TOKEN: "the bot token from the Discord developer portal" });
  const applicationId = ctx.setting("DISCORD_APPLICATION_ID") ?? applicationIdFromToken(botToken);
  if (!applicationId) throw new Error("DISCORD_APPLICATION_ID is not set and cannot be read from the bot token");
  ctx.warnIfLocal();
  const result = await setupDiscord({
    botToken,
    applicationId,
    workerUrl: ctx.workerUrl,
    apiBase: ctx.setting("DISCORD_API_BASE") ?? "https://discord.com/api/v10",
    fetch: ctx.fetch,
  });
  // Slash commands are typed with "/"; message commands ("Ask hermes") sit in the message menu.
  const commands = result.commands.map((c) => (/\s/.test(c) ? `"${c}" (message menu)` : `/${c}`)).join(", ");
  const bits = DISCORD_BOT_PERMISSIONS.map((p) => `${p.name} (${p.bit})`).join(", ");
  const lines = [
    line.ok(`registered ${commands} for application ${result.applicationId}`),
    result.endpointSet
      ? line.ok(`interactions endpoint set to ${result.interactionsUrl}`)
      : line.warn(
          `could not set the interactions endpoint (${result.endpointError}); paste ${result.interactionsUrl} into "Interactions Endpoint URL" in the developer portal once the Worker is deployed`,
        ),
    line.text(),
    line.text("For DISCORD_GATEWAY=on (plain messages, DMs, mentions and handoff threads without /ask), the bot connects with the intents"),
    line.text(`  ${Object.keys(INTENT_BITS).join(", ")}; only Message Content is privileged: Bot → Privileged Gateway Intents → Message Content Intent.`),
    result.messageContent === "on"
      ? line.ok("Message Content Intent is on (application flags)")
      : result.messageContent === "off"
        ? line.warn(`Message Content Intent is off: ${MESSAGE_CONTENT_FIX}`)
        : line.warn("Discord did not say whether Message Content Intent is on: check it in the developer portal"),
    line.text(),
    line.text("Add the bot to a server (open as a server admin):"),
    line.text(`  ${result.inviteUrl}`),
    line.dim("  scopes: bot (the bot user), applications.commands (its slash commands)"),
    line.dim(`  permissions=${new URL(result.inviteUrl).searchParams.get("permissions")}: the sum of 2^bit of ${bits}`),
  ];
  return { json: result, lines, exitCode: 0 };
}
