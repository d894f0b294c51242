import { randomBytes } from "node:crypto";
import path from "node:path";
import { applicationIdFromToken, DISCORD_BOT_PERMISSIONS, setupDiscord } from "../workers/platforms/discord/setup.ts";
import { MESSAGE_CONTENT_FIX } from "../workers/platforms/discord/health.ts";
import { INTENT_BITS } from "../workers/platforms/discord/gateway/protocol.ts";
import { slackManifest } from "../workers/platforms/slack/manifest.ts";
import { checkSlackToken } from "../workers/platforms/slack/setup.ts";
import { setupTelegramWebhook } from "../workers/platforms/telegram/setup.ts";
import { setupWhatsApp } from "../workers/platforms/whatsapp/setup.ts";
import { isLoopbackUrl } from "../workers/agent/loopback.ts";
import { CliError, DEFAULT_URL, readDevVar } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";

interface SetupOptions {
  io: CliIo;
  style: Style;
  url: string | undefined;
  json: boolean;
}

function settingFrom(io: CliIo, name: string): string | undefined {
  const v = io.env[name]?.trim();
  if (v) return v;
  return readDevVar(path.join(io.cwd, ".dev.vars"), name)?.trim() || undefined;
}

/** The settings, each with how to get it; one error naming every one that is missing. */
function needAll<K extends string>(io: CliIo, wanted: Record<K, string>): Record<K, string> {
  const found = {} as Record<K, string>;
  const missing: string[] = [];
  for (const [name, hint] of Object.entries(wanted) as Array<[K, string]>) {
    const v = settingFrom(io, name);
    if (v) found[name] = v;
    else missing.push(`  ${name}: ${hint}`);
  }
  if (missing.length > 0) {
    throw new CliError(`${missing.length === 1 ? "this setting is" : "these settings are"} not set (environment or ./.dev.vars):\n${missing.join("\n")}`);
  }
  return found;
}

/** `hermes-edge setup <platform>`: the exit code. */
/** The intents the Gateway connection identifies with, by Discord's names. */
const GATEWAY_INTENT_NAMES = Object.keys(INTENT_BITS);

export async function runSetup(platform: "telegram" | "discord" | "slack" | "whatsapp", opts: SetupOptions): Promise<number> {
  const { io, style } = opts;
  const out = (s = "") => println(io.stdout, s);
  const workerUrl = (opts.url ?? io.env.HERMES_EDGE_URL ?? DEFAULT_URL).replace(/\/+$/, "");
  const warnIfLocal = () => {
    if (!workerUrl.startsWith("https://") || isLoopbackUrl(workerUrl))
      println(io.stderr, style.yellow(`warning: ${workerUrl} is not a public https URL; ${platform} cannot reach it (pass --url https://…)`));
  };
  switch (platform) {
    case "telegram": {
      const { TELEGRAM_BOT_TOKEN: token, TELEGRAM_WEBHOOK_SECRET: secret } = needAll(io, {
        TELEGRAM_BOT_TOKEN: "the token @BotFather gave you",
        TELEGRAM_WEBHOOK_SECRET: `any random string, the same on the Worker (.dev.vars locally; deployed: npx wrangler secret put TELEGRAM_WEBHOOK_SECRET); for example ${randomBytes(24).toString("base64url")}`,
      });
      warnIfLocal();
      const result = await setupTelegramWebhook({
        token,
        secret,
        workerUrl,
        apiRoot: settingFrom(io, "TELEGRAM_API_ROOT") ?? "https://api.telegram.org",
        fetch: io.fetch,
      }).catch((err: Error) => {
        throw new CliError(err.message);
      });
      if (opts.json) return (out(JSON.stringify(result)), 0);
      out(`${style.green("✓")} @${result.bot.username}: webhook set to ${result.webhookUrl} (updates: ${result.allowedUpdates.join(", ")})`);
      out(`${style.green("✓")} command menu set: ${result.commands.map((c) => `/${c}`).join(", ")}`);
      const seen = result.telegramSees;
      if (seen.matches)
        out(`${style.green("✓")} Telegram reports that webhook URL; ${seen.pendingUpdates} update${seen.pendingUpdates === 1 ? "" : "s"} waiting`);
      else out(`${style.red("✗")} Telegram reports the webhook as ${seen.url || "(none)"}, not ${result.webhookUrl}: another setWebhook may have replaced it`);
      if (seen.lastError)
        out(
          `${style.yellow("!")} Telegram's last delivery error (${new Date(seen.lastError.at).toISOString()}): ${seen.lastError.message}${seen.lastError.at < io.now() - 600_000 ? " (from before; it clears once a delivery succeeds)" : ""}`,
        );
      out("  Telegram now sends messages to the Worker with your secret token; set TELEGRAM_ALLOWED_USERS on the Worker to who may talk to it.");
      return seen.matches ? 0 : 1;
    }
    case "discord": {
      const { DISCORD_BOT_TOKEN: botToken } = needAll(io, { DISCORD_BOT_TOKEN: "the bot token from the Discord developer portal" });
      const applicationId = settingFrom(io, "DISCORD_APPLICATION_ID") ?? applicationIdFromToken(botToken);
      if (!applicationId) throw new CliError("DISCORD_APPLICATION_ID is not set and cannot be read from the bot token");
      warnIfLocal();
      const result = await setupDiscord({
        botToken,
        applicationId,
        workerUrl,
        apiBase: settingFrom(io, "DISCORD_API_BASE") ?? "https://discord.com/api/v10",
        fetch: io.fetch,
      }).catch((err: Error) => {
        throw new CliError(err.message);
      });
      if (opts.json) return (out(JSON.stringify(result)), 0);
      // Slash commands are typed with "/"; message commands ("Ask hermes") sit in the message menu.
      out(
        `${style.green("✓")} registered ${result.commands.map((c) => (/\s/.test(c) ? `"${c}" (message menu)` : `/${c}`)).join(", ")} for application ${result.applicationId}`,
      );
      if (result.endpointSet) out(`${style.green("✓")} interactions endpoint set to ${result.interactionsUrl}`);
      else
        out(
          `${style.yellow("!")} could not set the interactions endpoint (${result.endpointError}); paste ${result.interactionsUrl} into "Interactions Endpoint URL" in the developer portal once the Worker is deployed`,
        );
      out();
      out("For DISCORD_GATEWAY=on (plain messages, DMs, mentions and handoff threads without /ask), the bot connects with the intents");
      out(`  ${GATEWAY_INTENT_NAMES.join(", ")}; only Message Content is privileged: Bot → Privileged Gateway Intents → Message Content Intent.`);
      if (result.messageContent === "on") out(`${style.green("✓")} Message Content Intent is on (application flags)`);
      else if (result.messageContent === "off") out(`${style.yellow("!")} Message Content Intent is off: ${MESSAGE_CONTENT_FIX}`);
      else out(`${style.yellow("!")} Discord did not say whether Message Content Intent is on: check it in the developer portal`);
      out();
      out("Add the bot to a server (open as a server admin):");
      out(`  ${result.inviteUrl}`);
      out(style.dim(`  scopes: bot (the bot user), applications.commands (its slash commands)`));
      out(
        style.dim(
          `  permissions=${new URL(result.inviteUrl).searchParams.get("permissions")}: the sum of 2^bit of ${DISCORD_BOT_PERMISSIONS.map((p) => `${p.name} (${p.bit})`).join(", ")}`,
        ),
      );
      return 0;
    }
    case "slack": {
      warnIfLocal();
      const manifest = slackManifest(workerUrl);
      const token = settingFrom(io, "SLACK_BOT_TOKEN");
      const who = token
        ? await checkSlackToken({ token, apiUrl: settingFrom(io, "SLACK_API_URL") ?? "https://slack.com/api/", fetch: io.fetch }).catch((err: Error) => {
            throw new CliError(err.message);
          })
        : null;
      if (opts.json) return (out(JSON.stringify(who ? { manifest, token: who } : { manifest })), 0);
      out("Paste this manifest at https://api.slack.com/apps → Create New App → From an app manifest:");
      out();
      out(JSON.stringify(manifest, null, 2));
      out();
      out("Then install the app, and set SLACK_BOT_TOKEN (xoxb-…) and SLACK_SIGNING_SECRET on the Worker.");
      if (who) out(`${style.green("✓")} SLACK_BOT_TOKEN works: bot ${who.botUserId} in ${who.team} (${who.teamId})`);
      else out(style.dim("(SLACK_BOT_TOKEN is not set here, so the token was not checked)"));
      return 0;
    }
    case "whatsapp":
      return setupWhatsAppCli(opts, workerUrl, warnIfLocal);
  }
}

/**
 * `setup whatsapp`: checks the token and number, subscribes the app to the business account's
 * webhooks where WHATSAPP_BUSINESS_ACCOUNT_ID is set, and prints what to paste in the app
 * dashboard (Meta's API cannot set the callback URL with a system user's token).
 */
async function setupWhatsAppCli(opts: SetupOptions, workerUrl: string, warnIfLocal: () => void): Promise<number> {
  const { io, style } = opts;
  const out = (s = "") => println(io.stdout, s);
  const found = needAll(io, {
    WHATSAPP_ACCESS_TOKEN: "a system user's token with whatsapp_business_messaging (Business settings → System users)",
    WHATSAPP_PHONE_NUMBER_ID: "the number's id from the app's WhatsApp → API Setup page (not the phone number)",
    WHATSAPP_VERIFY_TOKEN: `any random string, the same on the Worker (npx wrangler secret put WHATSAPP_VERIFY_TOKEN); for example ${randomBytes(24).toString("base64url")}`,
  });
  warnIfLocal();
  const g = { apiBase: settingFrom(io, "WHATSAPP_API_BASE") ?? "https://graph.facebook.com/v23.0", accessToken: found.WHATSAPP_ACCESS_TOKEN, fetch: io.fetch };
  const waba = settingFrom(io, "WHATSAPP_BUSINESS_ACCOUNT_ID") ?? null;
  const result = await setupWhatsApp(g, { phoneNumberId: found.WHATSAPP_PHONE_NUMBER_ID, businessAccountId: waba, url: workerUrl }).catch((err: Error) => {
    throw new CliError(err.message);
  });
  if (opts.json) return (out(JSON.stringify({ ...result, verifyToken: found.WHATSAPP_VERIFY_TOKEN })), 0);
  const n = result.number;
  out(
    `${style.green("✓")} ${n.displayPhoneNumber || found.WHATSAPP_PHONE_NUMBER_ID} (${n.verifiedName || "no verified name"}): the token and number work; quality ${n.qualityRating}`,
  );
  if (result.subscribed) out(`${style.green("✓")} the app is subscribed to business account ${waba}'s webhooks`);
  else if (result.subscribed === false) out(`${style.yellow("!")} Meta did not confirm the subscription to business account ${waba}`);
  else out(style.dim("(WHATSAPP_BUSINESS_ACCOUNT_ID is not set: the app's subscription to the account was not checked)"));
  out();
  out("In the app dashboard (developers.facebook.com → your app → WhatsApp → Configuration → Webhook), paste:");
  out(`  Callback URL:  ${result.callbackUrl}`);
  out(`  Verify token:  ${found.WHATSAPP_VERIFY_TOKEN}`);
  out("then subscribe the webhook field 'messages'. Set WHATSAPP_APP_SECRET (App settings → Basic) on the Worker; it checks every delivery.");
  return result.subscribed === false ? 1 : 0;
}
