import { sha256Hex } from "../security.ts";

/**
 * Linked identities in D1: which accounts are one person, the one-time `/link` codes, and
 * the throttle on wrong guesses. An account is `<platform>:<user id>` (the same string the
 * daily budget's `usage.user_key` holds), or `cli:operator` for the operator's CLI. Pure
 * storage: who may link is decided by the caller (workers/conversations/people.ts).
 */

/** The account the operator's CLI links as. */
export const OPERATOR_ACCOUNT = { platform: "cli", userId: "operator" } as const;

/** How long a `/link` code is good for. */
export const LINK_CODE_TTL_MS = 10 * 60_000;
/** Wrong guesses an account may make in {@link GUESS_WINDOW_MS} before it must wait. */
export const MAX_GUESSES = 5;
export const GUESS_WINDOW_MS = 10 * 60_000;

/** Codes are 8 characters of this alphabet (no 0/O, 1/I): 40 bits, shown as `ABCD-EFGH`. */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

export interface Account {
  platform: string;
  userId: string;
}

export interface LinkedAccount extends Account {
  linkedAt: number;
}

export function accountKey(a: Account): string {
  return `${a.platform}:${a.userId}`;
}

/** A code as typed, made canonical: upper case, only the alphabet's characters (`abcd efgh` = `ABCD-EFGH`). */
export function normaliseCode(typed: string): string {
  return typed.toUpperCase().replace(/[^A-Z0-9]/g, "");
}

function codeHash(code: string): Promise<string> {
  return sha256Hex(normaliseCode(code));
}

/** A fresh random code, `ABCD-EFGH`. */
function newCode(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  // 256 is a multiple of 32: every character is equally likely.
  const chars = [...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join("");
  return `${chars.slice(0, 4)}-${chars.slice(4)}`;
}

/** Issues a code for `account` (its earlier codes stop working); only its hash is stored. */
export async function issueCode(d1: D1Database, account: Account, now: number): Promise<{ code: string; expiresAt: number }> {
  const code = newCode();
  const expiresAt = now + LINK_CODE_TTL_MS;
  const key = accountKey(account);
  await d1.batch([
    d1.prepare("DELETE FROM link_codes WHERE account_key = ?1 OR expires_at <= ?2").bind(key, now),
    d1
      .prepare("INSERT INTO link_codes (code_hash, account_key, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)")
      .bind(await codeHash(code), key, now, expiresAt),
  ]);
  return { code, expiresAt };
}

export type Redeemed =
  | { ok: true; issuer: Account }
  /** `wrong`: no such code, used already, or expired (one answer for all: a guesser learns nothing). */
  | { ok: false; code: "wrong" }
  | { ok: false; code: "throttled"; retryAt: number }
  | { ok: false; code: "own_code" };

/**
 * Uses a code up (whatever follows: single-use) and says whose it was. An account with
 * {@link MAX_GUESSES} wrong guesses in the window is refused before the code is looked at,
 * so it cannot use up anyone's code either.
 */
export async function redeemCode(d1: D1Database, by: Account, typed: string, now: number): Promise<Redeemed> {
  const key = accountKey(by);
  const guesses = await d1
    .prepare("SELECT failures, window_start FROM link_guesses WHERE account_key = ?1")
    .bind(key)
    .first<{ failures: number; window_start: number }>();
  if (guesses && guesses.window_start > now - GUESS_WINDOW_MS && guesses.failures >= MAX_GUESSES)
    return { ok: false, code: "throttled", retryAt: guesses.window_start + GUESS_WINDOW_MS };
  const hash = await codeHash(typed);
  const row = await d1
    .prepare("DELETE FROM link_codes WHERE code_hash = ?1 RETURNING account_key, expires_at")
    .bind(hash)
    .first<{ account_key: string; expires_at: number }>();
  if (!row || row.expires_at <= now || normaliseCode(typed).length !== 8) {
    await d1
      .prepare(
        `INSERT INTO link_guesses (account_key, failures, window_start) VALUES (?1, 1, ?2)
         ON CONFLICT(account_key) DO UPDATE SET
           failures = CASE WHEN window_start <= ?2 - ?3 THEN 1 ELSE failures + 1 END,
           window_start = CASE WHEN window_start <= ?2 - ?3 THEN ?2 ELSE window_start END`,
      )
      .bind(key, now, GUESS_WINDOW_MS)
      .run();
    return { ok: false, code: "wrong" };
  }
  if (row.account_key === key) return { ok: false, code: "own_code" };
  const at = row.account_key.indexOf(":");
  return { ok: true, issuer: { platform: row.account_key.slice(0, at), userId: row.account_key.slice(at + 1) } };
}

interface Row {
  account_key: string;
  person_id: string;
  platform: string;
  user_id: string;
  linked_at: number;
}

const toLinked = (r: Row): LinkedAccount => ({ platform: r.platform, userId: r.user_id, linkedAt: r.linked_at });

/** The accounts of the person `account` belongs to (itself included), or [] when it is linked to nobody. */
export async function linkedAccounts(d1: D1Database, account: Account): Promise<LinkedAccount[]> {
  const { results } = await d1
    .prepare(
      `SELECT b.* FROM linked_accounts a JOIN linked_accounts b ON b.person_id = a.person_id
       WHERE a.account_key = ?1 ORDER BY b.linked_at, b.account_key`,
    )
    .bind(accountKey(account))
    .all<Row>();
  return results.map(toLinked);
}

/** The person's account on `platform` (the account itself when it is on that platform), or null. */
export async function accountOn(d1: D1Database, account: Account, platform: string): Promise<Account | null> {
  if (account.platform === platform) return account;
  const found = (await linkedAccounts(d1, account)).find((a) => a.platform === platform);
  return found ? { platform: found.platform, userId: found.userId } : null;
}

export type Joined =
  | { ok: true; personId: string; accounts: LinkedAccount[] }
  | { ok: false; code: "already_linked" }
  /** The two sides would give one person two accounts on `platform`. */
  | { ok: false; code: "platform_taken"; platform: string };

/**
 * Joins two accounts (and everyone already linked to either) into one person. Refused when
 * that would give the person two accounts on one platform; the unique index on
 * (person, platform) keeps that true even against a concurrent link.
 */
export async function joinAccounts(d1: D1Database, a: Account, b: Account, now: number, newPersonId: () => string): Promise<Joined> {
  const [left, right] = await Promise.all([personOf(d1, a), personOf(d1, b)]);
  if (left && left === right) return { ok: false, code: "already_linked" };
  const [la, lb] = await Promise.all([linkedAccounts(d1, a), linkedAccounts(d1, b)]);
  const sideA = la.length > 0 ? la : [{ ...a, linkedAt: now }];
  const sideB = lb.length > 0 ? lb : [{ ...b, linkedAt: now }];
  const clash = sideA.find((x) => sideB.some((y) => y.platform === x.platform));
  if (clash) return { ok: false, code: "platform_taken", platform: clash.platform };
  const personId = left ?? right ?? newPersonId();
  const insert = "INSERT OR IGNORE INTO linked_accounts (account_key, person_id, platform, user_id, linked_at) VALUES (?1, ?2, ?3, ?4, ?5)";
  const statements = [
    d1.prepare(insert).bind(accountKey(a), personId, a.platform, a.userId, now),
    d1.prepare(insert).bind(accountKey(b), personId, b.platform, b.userId, now),
  ];
  const other = left && right ? right : null;
  if (other) statements.push(d1.prepare("UPDATE linked_accounts SET person_id = ?1 WHERE person_id = ?2").bind(personId, other));
  await d1.batch(statements);
  return { ok: true, personId, accounts: await linkedAccounts(d1, a) };
}

async function personOf(d1: D1Database, a: Account): Promise<string | null> {
  const row = await d1.prepare("SELECT person_id FROM linked_accounts WHERE account_key = ?1").bind(accountKey(a)).first<{ person_id: string }>();
  return row?.person_id ?? null;
}

/**
 * Takes the person's account on `platform` out of the person (`account` may be that one
 * itself). A person left with one account is linked to nobody, so that row goes too.
 * Returns the account that was unlinked, or null when there was none.
 */
export async function unlinkPlatform(d1: D1Database, account: Account, platform: string): Promise<Account | null> {
  const person = await personOf(d1, account);
  if (!person) return null;
  const gone = await d1
    .prepare("DELETE FROM linked_accounts WHERE person_id = ?1 AND platform = ?2 RETURNING platform, user_id")
    .bind(person, platform)
    .first<{ platform: string; user_id: string }>();
  await d1.prepare("DELETE FROM linked_accounts WHERE person_id = ?1 AND (SELECT COUNT(*) FROM linked_accounts WHERE person_id = ?1) = 1").bind(person).run();
  return gone ? { platform: gone.platform, userId: gone.user_id } : null;
}

/** Every person with linked accounts, for the API and console (newest link last). */
export async function allPeople(d1: D1Database): Promise<Array<{ id: string; accounts: LinkedAccount[] }>> {
  const { results } = await d1.prepare("SELECT * FROM linked_accounts ORDER BY person_id, linked_at, account_key LIMIT 5000").all<Row>();
  const people = new Map<string, LinkedAccount[]>();
  for (const r of results) people.set(r.person_id, [...(people.get(r.person_id) ?? []), toLinked(r)]);
  return [...people].map(([id, accounts]) => ({ id, accounts }));
}

/** The person an id names, or null. */
export async function personById(d1: D1Database, personId: string): Promise<LinkedAccount[] | null> {
  const { results } = await d1.prepare("SELECT * FROM linked_accounts WHERE person_id = ?1 ORDER BY linked_at, account_key").bind(personId).all<Row>();
  return results.length > 0 ? results.map(toLinked) : null;
}

/**
 * The SQL of every account key of `?N`'s person (itself included, linked or not): the
 * daily budget and `/resume` count a person's accounts through it.
 */
export function personKeysSql(param: string): string {
  return `(SELECT ${param} UNION SELECT pb.account_key FROM linked_accounts pa JOIN linked_accounts pb ON pb.person_id = pa.person_id WHERE pa.account_key = ${param})`;
}
