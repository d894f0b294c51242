import { CHAT_COMMANDS, commandUsage } from "../platforms/commands.ts";
import { allowedUsersSetting, PLATFORM_LABEL, type PlatformName } from "../platforms/names.ts";
import type { CommandStyle } from "../platforms/types.ts";

/** The short answer an unauthorised user gets (at most once per chat per 10 minutes), naming the id to add. */
export function refusalText(platform: PlatformName, userId: string): string {
  return `Sorry, you are not allowed to use this bot. Ask its owner to add your ${PLATFORM_LABEL[platform]} user id ${userId} to ${allowedUsersSetting(platform)}.`;
}

/** The answer to /whoami. */
export function whoamiText(platform: PlatformName, userId: string, allowed: boolean): string {
  const may = allowed ? "You may use this bot." : `You may not use this bot yet: its owner can add ${userId} to ${allowedUsersSetting(platform)}.`;
  return `You are ${PLATFORM_LABEL[platform]} user ${userId}. ${may}`;
}

/** The answer to /help: how to talk to the agent, then every command of the table. */
export function helpText(style: CommandStyle): string {
  return [style.howToTalk, ...CHAT_COMMANDS.map((c) => `${style.prefix}${commandUsage(c)}: ${c.help}`)].join("\n");
}

export function unknownCommandText(style: CommandStyle, name: string): string {
  return `Unknown command ${style.prefix}${name}. ${style.prefix}help lists the commands.`;
}
