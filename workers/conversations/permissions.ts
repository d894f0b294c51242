import { commandSpec, mayRun, type CommandName, type Permission } from "../platforms/commands.ts";
import { adminUsersSetting, allowedUsersSetting } from "../platforms/names.ts";
import type { SessionSource } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";

/**
 * Whether the sender of `source` may run a chat command here, by the command table's
 * audience and places and this Worker's `*_ALLOWED_USERS` / `*_ADMIN_USERS`: the one check
 * the webhook intake, autocomplete and the command dispatcher all use.
 */
export function commandPermission(env: Env, name: CommandName, source: SessionSource): Permission {
  const ps = settings(env).platforms[source.platform];
  return mayRun(name, {
    allowed: isAllowed(ps.allowed, source.userId, source.userAltId),
    admin: isAllowed(ps.admins, source.userId, source.userAltId),
    chatType: source.chatType,
  });
}

/** What a refused command answers: the setting that would let the user run it, or where it works. */
export function permissionRefusal(name: CommandName, source: SessionSource, need: "allowed" | "admin" | "place"): string {
  const spec = commandSpec(name);
  if (need === "admin")
    return `Sorry, only ${adminUsersSetting(source.platform)} may ${spec.action}: ask the bot's owner to add your user id ${source.userId} to it.`;
  if (need === "allowed")
    return `Sorry, only ${allowedUsersSetting(source.platform)} may ${spec.action}: ask the bot's owner to add your user id ${source.userId} to it.`;
  return `This command (${spec.name}) works only in these chats: ${spec.where.join(", ")}.`;
}
