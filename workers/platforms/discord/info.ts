import type { PlatformInfo } from "../info.ts";
import { discordLink } from "./link.ts";

export const discordInfo = {
  name: "discord",
  label: "Discord",
  threadWord: "thread",
  required: ["DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY"],
  sdk: "discord-interactions",
  setupHelp: "registers the slash commands (DISCORD_BOT_TOKEN), sets the interactions\nendpoint to <url>/webhooks/discord, and prints the bot's invite URL",
  link: discordLink,
} as const satisfies PlatformInfo<"discord">;
