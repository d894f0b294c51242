import { Hono } from "hono";
import * as z from "zod";
import { accountOn, allPeople, OPERATOR_ACCOUNT, personById, unlinkPlatform, type LinkedAccount } from "../db/people.ts";
import { dmRefusal, linkWithCode } from "../conversations/people.ts";
import { isPlatformName } from "../platforms/names.ts";
import { isAllowed, settings } from "../settings.ts";
import { ApiError, notFound } from "./errors.ts";
import { jsonBody } from "./validate.ts";

const LinkInput = z.lazy(() => z.object({ code: z.string().trim().min(1).max(40) }));

/** An account as the API shows it, with what this Worker's settings say about it now. */
function accountJson(env: Env, a: LinkedAccount) {
  const ps = isPlatformName(a.platform) ? settings(env).platforms[a.platform] : null;
  return {
    platform: a.platform,
    user_id: a.userId,
    linked_at: a.linkedAt,
    allowed: ps ? isAllowed(ps.allowed, a.userId) : true,
    admin: ps ? isAllowed(ps.admins, a.userId) : false,
  };
}

/**
 * Linked identities over the API: `GET /v1/people` (each person with their accounts),
 * `POST /v1/links` (`hermes-edge link <code>`: links the operator's CLI to the account that
 * asked for the code), `DELETE /v1/people/:id/accounts/:platform`.
 */
export const peopleRoutes = new Hono<{ Bindings: Env }>()
  .get("/people", async (c) => {
    const people = await allPeople(c.env.DB);
    return c.json({ people: people.map((p) => ({ id: p.id, accounts: p.accounts.map((a) => accountJson(c.env, a)) })) });
  })
  .post("/links", async (c) => {
    const { code } = await jsonBody(c, LinkInput);
    const linked = await linkWithCode(c.env, OPERATOR_ACCOUNT, code, Date.now());
    if (!linked.ok) return c.json({ error: { code: linked.code, message: linked.text } }, linked.status);
    return c.json({ person: { id: linked.personId, accounts: linked.accounts.map((a) => accountJson(c.env, a)) }, message: linked.text });
  })
  .delete("/people/:id/accounts/:platform", async (c) => {
    const accounts = await personById(c.env.DB, c.req.param("id"));
    const first = accounts?.[0];
    if (!first) throw notFound(`person ${c.req.param("id")}`);
    const gone = await unlinkPlatform(c.env.DB, first, c.req.param("platform"));
    return c.json({ unlinked: gone !== null });
  });

/**
 * The user id of a person's account on `platform`, for a handoff to their DM: `person` is a
 * person id, or `operator` (the accounts linked to the operator's CLI with `hermes-edge link`).
 */
export async function personDmUser(env: Env, person: string, platform: string): Promise<string> {
  const accounts = person === "operator" ? [OPERATOR_ACCOUNT] : await personById(env.DB, person);
  const first = accounts?.[0];
  if (!first) throw notFound(`person ${person}`);
  const account = await accountOn(env.DB, first, platform);
  if (!account || account.platform !== platform)
    throw new ApiError(
      422,
      "no_direct_chat",
      person === "operator"
        ? `the operator's CLI is linked to no ${platform} account: send /link to the bot on ${platform}, then run hermes-edge link <code>`
        : `person ${person} has no linked ${platform} account`,
    );
  const refused = dmRefusal(env, account);
  if (refused) throw new ApiError(422, "no_direct_chat", refused);
  return account.userId;
}
