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

export function helpText(style: CommandStyle): string {
  const c = style.prefix;
  return [
    style.howToTalk,
    `${c}stop: stop the reply that is running here`,
    `${c}new: start a fresh session here`,
    `${c}resume <id or title>: continue an earlier session here (no argument: list the ones you may resume)`,
    `${c}status: this chat's session, its context use, and whether a reply is running`,
    `${c}instructions [text|clear]: show or set this session's own instructions`,
    `${c}compact: fold the older part of this session into its summary now`,
    `${c}tools: what the agent can use`,
    `${c}sethome: make this chat the home channel for handoffs from the CLI`,
    `${c}whoami: your user id here`,
    `${c}help: this help`,
  ].join("\n");
}

export function unknownCommandText(style: CommandStyle, name: string): string {
  return `Unknown command ${style.prefix}${name}. ${style.prefix}help lists the commands.`;
}
