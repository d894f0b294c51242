import { CHAT_COMMANDS } from "../commands.ts";
import { line, type SetupContext, type SetupReport } from "../module.ts";
import { loadGrammy } from "./grammy.ts";

/** What Telegram reports about the webhook once it is set (getWebhookInfo). */
export interface TelegramWebhookStatus {
  /** The URL Telegram now delivers to, and whether it is the one just set. */
  url: string;
  matches: boolean;
  pendingUpdates: number;
  /** Telegram's last failed delivery to this bot's webhook, if it remembers one. */
  lastError: { at: number; message: string } | null;
}

/** What `hermes-edge setup telegram` did. */
export interface TelegramSetupResult {
  bot: { id: number; username: string };
  webhookUrl: string;
  allowedUpdates: string[];
  /** The commands the bot's menu now lists (setMyCommands). */
  commands: string[];
  telegramSees: TelegramWebhookStatus;
}

/** Updates the Worker handles; anything else Telegram need not send. */
export const TELEGRAM_ALLOWED_UPDATES = ["message"];

/** The chat commands of the table as Telegram's command menu lists them (setMyCommands). */
export function telegramMenu(): Array<{ command: string; description: string }> {
  return CHAT_COMMANDS.map((c) => ({ command: c.name, description: c.description }));
}

/**
 * Checks the token (getMe), points the bot's webhook at the Worker with the secret token
 * Telegram will send back in X-Telegram-Bot-Api-Secret-Token, sets the command menu from
 * the command table (setMyCommands, replacing any older list), then reads back what
 * Telegram sees (getWebhookInfo): the URL, updates waiting, the last delivery error.
 */
export async function setupTelegramWebhook(opts: {
  token: string;
  secret: string;
  workerUrl: string;
  apiRoot: string;
  fetch: typeof fetch;
}): Promise<TelegramSetupResult> {
  const { Api, GrammyError, HttpError } = await loadGrammy();
  const api = new Api(opts.token, { apiRoot: opts.apiRoot, fetch: opts.fetch as never });
  const webhookUrl = `${opts.workerUrl.replace(/\/+$/, "")}/webhooks/telegram`;
  try {
    const me = await api.getMe();
    await api.setWebhook(webhookUrl, { secret_token: opts.secret, allowed_updates: TELEGRAM_ALLOWED_UPDATES as never, drop_pending_updates: false });
    const menu = telegramMenu();
    await api.setMyCommands(menu);
    const info = await api.getWebhookInfo();
    const telegramSees: TelegramWebhookStatus = {
      url: info.url ?? "",
      matches: info.url === webhookUrl,
      pendingUpdates: info.pending_update_count,
      lastError: info.last_error_date ? { at: info.last_error_date * 1000, message: info.last_error_message ?? "" } : null,
    };
    return {
      bot: { id: me.id, username: me.username },
      webhookUrl,
      allowedUpdates: TELEGRAM_ALLOWED_UPDATES,
      commands: menu.map((m) => m.command),
      telegramSees,
    };
  } catch (err) {
    if (err instanceof GrammyError) {
      const hint = err.error_code === 401 || err.error_code === 404 ? " (is TELEGRAM_BOT_TOKEN right?)" : "";
      throw new Error(`Telegram refused ${err.method}: ${err.description}${hint}`);
    }
    if (err instanceof HttpError) throw new Error(`cannot reach Telegram at ${opts.apiRoot}: ${err.message}`);
    throw err;
  }
}

/** `hermes-edge setup telegram`: sets the webhook and menu, then reports what Telegram sees. */
export async function telegramSetupSteps(ctx: SetupContext): Promise<SetupReport> {
  const { TELEGRAM_BOT_TOKEN: token, TELEGRAM_WEBHOOK_SECRET: secret } = ctx.need({
    TELEGRAM_BOT_TOKEN: "the token @BotFather gave you",
    TELEGRAM_WEBHOOK_SECRET: `any random string, the same on the Worker (.dev.vars locally; deployed: npx wrangler secret put TELEGRAM_WEBHOOK_SECRET); for example ${ctx.randomSecret()}`,
  });
  ctx.warnIfLocal();
  const result = await setupTelegramWebhook({
    token,
    secret,
    workerUrl: ctx.workerUrl,
    apiRoot: ctx.setting("TELEGRAM_API_ROOT") ?? "https://api.telegram.org",
    fetch: ctx.fetch,
  });
  const seen = result.telegramSees;
  const s = seen.pendingUpdates === 1 ? "" : "s";
  const lines = [
    line.ok(`@${result.bot.username}: webhook set to ${result.webhookUrl} (updates: ${result.allowedUpdates.join(", ")})`),
    line.ok(`command menu set: ${result.commands.map((c) => `/${c}`).join(", ")}`),
    seen.matches
      ? line.ok(`Telegram reports that webhook URL; ${seen.pendingUpdates} update${s} waiting`)
      : line.fail(`Telegram reports the webhook as ${seen.url || "(none)"}, not ${result.webhookUrl}: another setWebhook may have replaced it`),
  ];
  if (seen.lastError) {
    const old = seen.lastError.at < ctx.now() - 600_000 ? " (from before; it clears once a delivery succeeds)" : "";
    lines.push(line.warn(`Telegram's last delivery error (${new Date(seen.lastError.at).toISOString()}): ${seen.lastError.message}${old}`));
  }
  lines.push(line.text("  Telegram now sends messages to the Worker with your secret token; set TELEGRAM_ALLOWED_USERS on the Worker to who may talk to it."));
  return { json: result, lines, exitCode: seen.matches ? 0 : 1 };
}
