import {
  accountKey,
  issueCode,
  joinAccounts,
  linkedAccounts,
  OPERATOR_ACCOUNT,
  redeemCode,
  unlinkPlatform,
  type Account,
  type LinkedAccount,
} from "../db/people.ts";
import { allowedUsersSetting, isPlatformName, PLATFORM_LABEL } from "../platforms/names.ts";
import type { SessionSource } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";
import { whoamiText } from "./texts.ts";

/**
 * Linked identities (`/link`, `/unlink`, `/whoami`, `hermes-edge link`): the rules around
 * workers/db/people.ts. Both sides of a link must be allowed users when it is made; a link
 * joins budgets and `/resume` lists, and never makes anyone an admin (admin stays per
 * account, read from `*_ADMIN_USERS` each time).
 */

/** How an account is written for people: "Slack user U123", "the operator's CLI". */
export function accountLabel(a: Account): string {
  if (a.platform === OPERATOR_ACCOUNT.platform) return "the operator's CLI";
  return `${isPlatformName(a.platform) ? PLATFORM_LABEL[a.platform] : a.platform} user ${a.userId}`;
}

/** May this account take part in a link now? The operator's CLI always (it holds the API token); a platform account when allowed there. */
function mayLink(env: Env, a: Account): boolean {
  if (a.platform === OPERATOR_ACCOUNT.platform) return a.userId === OPERATOR_ACCOUNT.userId;
  return isPlatformName(a.platform) && isAllowed(settings(env).platforms[a.platform].allowed, a.userId);
}

function newPersonId(): string {
  return `person_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
}

/** What a link attempt came to: the person's accounts, or why not (`status` for the API). */
export type LinkOutcome =
  | { ok: true; personId: string; accounts: LinkedAccount[]; text: string }
  | { ok: false; status: 400 | 409 | 422 | 429; code: string; text: string };

/** Uses a code `by` typed (a chat's `/link <code>`, or `hermes-edge link <code>`). */
export async function linkWithCode(env: Env, by: Account, typed: string, now: number): Promise<LinkOutcome> {
  const redeemed = await redeemCode(env.DB, by, typed, now);
  if (!redeemed.ok) {
    if (redeemed.code === "throttled") {
      const minutes = Math.max(1, Math.ceil((redeemed.retryAt - now) / 60_000));
      return { ok: false, status: 429, code: "too_many_guesses", text: `Too many wrong codes: try again in ${minutes} min.` };
    }
    if (redeemed.code === "own_code")
      return {
        ok: false,
        status: 400,
        code: "own_code",
        text: "That is this account's own code: use it on your other platform (it is used up now; /link makes a new one).",
      };
    return {
      ok: false,
      status: 400,
      code: "wrong_code",
      text: "That code is wrong, used or expired: send /link on your other account for a new one (codes last 10 minutes).",
    };
  }
  const { issuer } = redeemed;
  if (!mayLink(env, issuer))
    return { ok: false, status: 422, code: "not_allowed", text: `Not linked: ${accountLabel(issuer)} is not an allowed user any more.` };
  const joined = await joinAccounts(env.DB, issuer, by, now, newPersonId);
  if (!joined.ok) {
    if (joined.code === "already_linked") return { ok: false, status: 409, code: "already_linked", text: "These accounts are linked already." };
    const label = isPlatformName(joined.platform) ? PLATFORM_LABEL[joined.platform] : joined.platform;
    return {
      ok: false,
      status: 409,
      code: "platform_taken",
      text: `Not linked: that would give you two ${label} accounts. /unlink ${joined.platform} one of them first.`,
    };
  }
  const others = joined.accounts.filter((a) => accountKey(a) !== accountKey(by)).map(accountLabel);
  return { ok: true, personId: joined.personId, accounts: joined.accounts, text: `Linked. You are also ${others.join(", ")}. /whoami lists your accounts.` };
}

/** `/link [code]` in a chat. */
export async function linkCommand(env: Env, source: SessionSource, args: string, now: number): Promise<string> {
  const me = { platform: source.platform, userId: source.userId };
  if (args.trim()) return (await linkWithCode(env, me, args, now)).text;
  const { code } = await issueCode(env.DB, me, now);
  return [
    `Your link code: ${code}`,
    "Within 10 minutes, send /link " + code + " to this bot from your account on another platform, or have the operator run: hermes-edge link " + code,
    "It works once. Linked accounts share one daily allowance and see each other's sessions in /resume; admin rights stay per account.",
  ].join("\n");
}

/** `/unlink <platform>` in a chat. */
export async function unlinkCommand(env: Env, source: SessionSource, args: string): Promise<string> {
  const platform = args.trim().toLowerCase();
  if (!platform) return "Usage: /unlink <platform> (the platform of the account to unlink; /whoami lists them)";
  const gone = await unlinkPlatform(env.DB, { platform: source.platform, userId: source.userId }, platform);
  return gone ? `Unlinked ${accountLabel(gone)}.` : `You have no linked ${platform} account (/whoami lists them).`;
}

/** `/whoami` for an allowed user: who they are here, and the accounts linked to them. */
export async function whoamiAnswer(env: Env, source: SessionSource): Promise<string> {
  const base = whoamiText(source.platform, source.userId, isAllowed(settings(env).platforms[source.platform].allowed, source.userId, source.userAltId));
  const linked = (await linkedAccounts(env.DB, { platform: source.platform, userId: source.userId })).filter(
    (a) => !(a.platform === source.platform && a.userId === source.userId),
  );
  if (linked.length === 0) return base;
  return `${base}\nLinked: ${linked.map(accountLabel).join(", ")}. (/unlink <platform> undoes one.)`;
}

/** Why `account` (a person's account on `platform`) cannot be handed a session, or null. */
export function dmRefusal(env: Env, account: Account): string | null {
  if (!isPlatformName(account.platform) || isAllowed(settings(env).platforms[account.platform].allowed, account.userId)) return null;
  return `your ${PLATFORM_LABEL[account.platform]} account ${account.userId} is not in ${allowedUsersSetting(account.platform)}, so it could not carry on there`;
}
