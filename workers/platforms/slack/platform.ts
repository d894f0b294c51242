import type { PlatformModule } from "../module.ts";
import { SlackAdapter } from "./index.ts";
import { slackSetupSteps } from "./setup.ts";

export const slackPlatform: PlatformModule = {
  build: (v) => new SlackAdapter({ botToken: v.SLACK_BOT_TOKEN ?? "", signingSecret: v.SLACK_SIGNING_SECRET ?? "", apiUrl: v.SLACK_API_URL }),
  setup: slackSetupSteps,
};
