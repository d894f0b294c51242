import type { AuthTestResponse } from "@slack/web-api";
import type { PlatformHealth } from "../types.ts";
import { errorMessage } from "../../log/index.ts";

/**
 * What Slack says about the bot token (auth.test): the workspace and bot user. Slack's API
 * does not tell where it sends events; the app manifest (`setup slack`) sets that.
 */
export async function slackHealth(authTest: () => Promise<AuthTestResponse>, origin: string): Promise<PlatformHealth> {
  try {
    const r = await authTest();
    return { detail: `workspace ${r.team ?? r.team_id ?? "?"} · bot <@${r.user_id ?? "?"}> · events should go to ${origin}/webhooks/slack`, problems: [] };
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error;
    const refused = code === "invalid_auth" || code === "not_authed" || code === "account_inactive" || code === "token_revoked";
    return {
      detail: refused ? "token refused" : "not reachable",
      problems: [
        {
          problem: refused ? `Slack refused the bot token (${code})` : `cannot reach Slack: ${errorMessage(err)}`,
          fix: refused ? "set the right token: npx wrangler secret put SLACK_BOT_TOKEN" : "try again later",
        },
      ],
    };
  }
}
