import type { PlatformInfo } from "../info.ts";
import { slackLink } from "./link.ts";

export const slackInfo = {
  name: "slack",
  label: "Slack",
  threadWord: "thread",
  required: ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"],
  sdk: "@slack/web-api",
  setupHelp: "prints the app manifest to paste at api.slack.com/apps; checks\nSLACK_BOT_TOKEN when it is set",
  link: slackLink,
} as const satisfies PlatformInfo<"slack">;
