import { CHAT_COMMANDS, commandUsage } from "../commands.ts";
import { SLACK_SLASH_COMMAND } from "./parse.ts";

/** Bot scopes the Worker needs: read what it is sent (files shared with it too), write replies, the slash command. */
export const SLACK_BOT_SCOPES = [
  "app_mentions:read",
  "chat:write",
  "commands",
  "files:read",
  "im:history",
  "im:read",
  "im:write",
  "channels:history",
  "groups:history",
  "mpim:history",
];
export const SLACK_BOT_EVENTS = ["app_mention", "message.im", "message.channels", "message.groups", "message.mpim"];

/** The slash command's description: a prompt, or any chat command of the table (`/hermes resume <id or title>`). */
export function slashDescription(): string {
  return `Ask the agent, or: ${CHAT_COMMANDS.map(commandUsage).join(" | ")}`;
}

/** The app manifest to paste at api.slack.com/apps → Create New App → From a manifest. */
export function slackManifest(workerUrl: string, name = "hermes") {
  const url = `${workerUrl.replace(/\/+$/, "")}/webhooks/slack`;
  return {
    display_information: { name, description: "Your agent, through hermes-edge" },
    features: {
      app_home: { home_tab_enabled: false, messages_tab_enabled: true, messages_tab_read_only_enabled: false },
      bot_user: { display_name: name, always_online: true },
      slash_commands: [{ command: SLACK_SLASH_COMMAND, url, description: slashDescription(), usage_hint: "<a question> | stop | help", should_escape: false }],
    },
    oauth_config: { scopes: { bot: SLACK_BOT_SCOPES } },
    settings: {
      event_subscriptions: { request_url: url, bot_events: SLACK_BOT_EVENTS },
      org_deploy_enabled: false,
      socket_mode_enabled: false,
      token_rotation_enabled: false,
    },
  };
}
