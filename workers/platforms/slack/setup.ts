import { WebClient } from "@slack/web-api";
import { workerdSafeFetch } from "./index.ts";

/** Who a bot token belongs to (auth.test), for `hermes-edge setup slack`. */
export async function checkSlackToken(opts: {
  token: string;
  apiUrl: string;
  fetch: typeof fetch;
}): Promise<{ team: string; teamId: string; botUserId: string }> {
  const client = new WebClient(opts.token, {
    slackApiUrl: opts.apiUrl.endsWith("/") ? opts.apiUrl : `${opts.apiUrl}/`,
    fetch: workerdSafeFetch(opts.fetch),
    retryConfig: { retries: 0 },
  });
  try {
    const r = await client.auth.test();
    return { team: String(r.team ?? ""), teamId: String(r.team_id ?? ""), botUserId: String(r.user_id ?? "") };
  } catch (err) {
    const e = err as { data?: { error?: string }; message?: string };
    throw new Error(`Slack refused the token: ${e.data?.error ?? e.message ?? String(err)} (is SLACK_BOT_TOKEN right?)`);
  }
}
