import { PLATFORM_TIMEOUT_MS, type PlatformHealth } from "../types.ts";
import { errorMessage } from "../../log/index.ts";
import { loadGrammy } from "./grammy.ts";

/** A delivery error Telegram recorded this recently still counts as a problem. */
export const RECENT_ERROR_MS = 60 * 60 * 1000;

/**
 * What Telegram sees (getWebhookInfo): the URL it delivers to, updates waiting, the last
 * delivery error. `origin` is this Worker's; the webhook must be `<origin>/webhooks/telegram`.
 */
export async function telegramHealth(opts: { token: string; apiRoot: string; fetch: typeof fetch }, origin: string, now: number): Promise<PlatformHealth> {
  const expected = `${origin}/webhooks/telegram`;
  const fix = `npx hermes-edge setup telegram --url ${origin}`;
  const { Api, GrammyError } = await loadGrammy();
  const api = new Api(opts.token, { apiRoot: opts.apiRoot, fetch: opts.fetch as never, timeoutSeconds: PLATFORM_TIMEOUT_MS / 1000 });
  try {
    const info = await api.getWebhookInfo();
    const problems: PlatformHealth["problems"] = [];
    if (!info.url) problems.push({ problem: "Telegram has no webhook for this bot: nothing is delivered", fix });
    else if (info.url !== expected) problems.push({ problem: `Telegram delivers to ${info.url}, not ${expected}`, fix });
    const lastError = info.last_error_date ? info.last_error_date * 1000 : 0;
    if (lastError > now - RECENT_ERROR_MS) {
      problems.push({
        problem: `Telegram's last delivery failed ${Math.max(1, Math.round((now - lastError) / 60_000))} min ago: ${info.last_error_message ?? "no reason given"}`,
        fix: `check the Worker's log (npx wrangler tail), then ${fix}`,
      });
    }
    return { detail: `webhook ${info.url || "(none)"} · ${info.pending_update_count} update(s) waiting`, problems };
  } catch (err) {
    const refused = err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404);
    const why = err instanceof GrammyError ? `Telegram refused getWebhookInfo: ${err.description}` : `cannot reach Telegram: ${errorMessage(err)}`;
    return {
      detail: "not reachable",
      problems: [
        { problem: why, fix: refused ? "set the right token: npx wrangler secret put TELEGRAM_BOT_TOKEN" : `try again; ${opts.apiRoot} did not answer` },
      ],
    };
  }
}
