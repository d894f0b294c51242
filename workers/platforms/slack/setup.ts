import type { AuthTestResponse } from "@slack/web-api";
import { line, type SetupContext, type SetupReport } from "../module.ts";
import { slackManifest } from "./manifest.ts";
import { slackApiBase, slackCall } from "./web-api.ts";

/** Who a bot token belongs to (auth.test), for `hermes-edge setup slack`. */
export async function checkSlackToken(opts: {
  token: string;
  apiUrl: string;
  fetch: typeof fetch;
}): Promise<{ team: string; teamId: string; botUserId: string }> {
  try {
    const r = await slackCall<AuthTestResponse>({ token: opts.token, apiUrl: slackApiBase(opts.apiUrl), fetch: opts.fetch }, "auth.test", {});
    return { team: String(r.team ?? ""), teamId: String(r.team_id ?? ""), botUserId: String(r.user_id ?? "") };
  } catch (err) {
    const e = err as { data?: { error?: string }; message?: string };
    throw new Error(`Slack refused the token: ${e.data?.error ?? e.message ?? String(err)} (is SLACK_BOT_TOKEN right?)`);
  }
}

/** `hermes-edge setup slack`: prints the app manifest, and checks SLACK_BOT_TOKEN where it is set. */
export async function slackSetupSteps(ctx: SetupContext): Promise<SetupReport> {
  ctx.warnIfLocal();
  const manifest = slackManifest(ctx.workerUrl);
  const token = ctx.setting("SLACK_BOT_TOKEN");
  const who = token ? await checkSlackToken({ token, apiUrl: ctx.setting("SLACK_API_URL") ?? "https://slack.com/api/", fetch: ctx.fetch }) : null;
  const lines = [
    line.text("Paste this manifest at https://api.slack.com/apps → Create New App → From an app manifest:"),
    line.text(),
    line.text(JSON.stringify(manifest, null, 2)),
    line.text(),
    line.text("Then install the app, and set SLACK_BOT_TOKEN (xoxb-…) and SLACK_SIGNING_SECRET on the Worker."),
    who
      ? line.ok(`SLACK_BOT_TOKEN works: bot ${who.botUserId} in ${who.team} (${who.teamId})`)
      : line.dim("(SLACK_BOT_TOKEN is not set here, so the token was not checked)"),
  ];
  return { json: who ? { manifest, token: who } : { manifest }, lines, exitCode: 0 };
}
