import { errorMessage } from "../../log/index.ts";
import { baseOf, type HomeserverSettings } from "./api.ts";
import { APPSERVICE_ID, pingAppservice, whoami } from "./health.ts";
import { localpartOf } from "./ids.ts";

/** What the registration file says (spec "Registration"). */
export interface Registration {
  url: string;
  asToken: string;
  hsToken: string;
  botUser: string;
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
const regexQuote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The application service's registration YAML, for the homeserver's config
 * (`app_service_config_files` on Synapse): the Worker's webhook URL, both tokens, the bot as
 * `sender_localpart` and an exclusive namespace of that one user, not rate limited.
 */
export function registrationYaml(r: Registration): string {
  return [
    `id: ${APPSERVICE_ID}`,
    `url: ${quote(`${baseOf(r.url)}/webhooks/matrix`)}`,
    `as_token: ${quote(r.asToken)}`,
    `hs_token: ${quote(r.hsToken)}`,
    `sender_localpart: ${quote(localpartOf(r.botUser))}`,
    "namespaces:",
    "  users:",
    "    - exclusive: true",
    `      regex: ${quote(`^${regexQuote(r.botUser)}$`)}`,
    "  aliases: []",
    "  rooms: []",
    "rate_limited: false",
    "receive_ephemeral: false",
    "",
  ].join("\n");
}

/** What the homeserver answered `hermes-edge setup matrix`. */
export interface MatrixCheck {
  /** The client-server spec versions it speaks. */
  versions: string[];
  /** Who the as_token acts as (null: refused, with why). */
  bot: { ok: true; userId: string } | { ok: false; why: string };
  /** Whether it reached the Worker's `/_matrix/app/v1/ping` (null ms: it did not say how fast). */
  ping: { ok: true; ms: number | null } | { ok: false; why: string };
}

/** Checks the homeserver answers (`GET /_matrix/client/versions`), knows the bot, and reaches the Worker. Throws only when it cannot be reached at all. */
export async function checkMatrix(h: HomeserverSettings): Promise<MatrixCheck> {
  let versions: string[];
  try {
    const res = await h.fetch(`${baseOf(h.homeserverUrl)}/_matrix/client/versions`, { redirect: "follow" });
    const v = (await res.json().catch(() => null)) as { versions?: unknown } | null;
    versions = Array.isArray(v?.versions) ? v.versions.filter((x): x is string => typeof x === "string") : [];
    if (!res.ok || versions.length === 0) throw new Error(`HTTP ${res.status}, no versions`);
  } catch (err) {
    throw new Error(`the homeserver at ${h.homeserverUrl} does not answer as a Matrix homeserver: ${errorMessage(err)} (is MATRIX_HOMESERVER_URL right?)`);
  }
  const bot = await whoami(h).then(
    (userId): MatrixCheck["bot"] => ({ ok: true, userId }),
    (err: unknown): MatrixCheck["bot"] => ({ ok: false, why: errorMessage(err) }),
  );
  const ping = await pingAppservice(h).then(
    (ms): MatrixCheck["ping"] => ({ ok: true, ms }),
    (err: unknown): MatrixCheck["ping"] => ({ ok: false, why: errorMessage(err) }),
  );
  return { versions, bot, ping };
}
