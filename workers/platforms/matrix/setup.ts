import { errorMessage } from "../../log/index.ts";
import { line, type SetupContext, type SetupReport } from "../module.ts";
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

/**
 * `hermes-edge setup matrix`: prints the registration YAML for the homeserver (the two tokens
 * made here when unset, with how to store them), then checks the homeserver answers, knows the
 * bot, and reaches the Worker's `/_matrix/app/v1/ping`. Exit 1 when a check fails.
 */
export async function matrixSetupSteps(ctx: SetupContext): Promise<SetupReport> {
  const { MATRIX_HOMESERVER_URL: homeserverUrl, MATRIX_BOT_USER: botUser } = ctx.need({
    MATRIX_HOMESERVER_URL: "the homeserver's client URL, https://matrix.example.org",
    MATRIX_BOT_USER: "the bot's user id, @hermes:example.org",
  });
  ctx.warnIfLocal();
  const made: string[] = [];
  const token = (name: string) => {
    const v = ctx.setting(name);
    if (v) return v;
    made.push(name);
    return ctx.randomSecret();
  };
  const asToken = token("MATRIX_AS_TOKEN");
  const hsToken = token("MATRIX_HS_TOKEN");
  const yaml = registrationYaml({ url: ctx.workerUrl, asToken, hsToken, botUser });
  const check = await checkMatrix({ homeserverUrl, asToken, botUser, fetch: ctx.fetch });
  const ok = check.bot.ok && check.ping.ok;
  const lines = [
    line.text("The registration for the homeserver (Synapse: save it as hermes-edge.yaml, list it in app_service_config_files, restart):"),
    line.text(),
    line.text(yaml),
    ...made.map((name) => line.warn(`${name} was not set: made one above. Store it on the Worker: npx wrangler secret put ${name} (and in .dev.vars locally)`)),
    line.ok(`the homeserver answers (spec ${check.versions.slice(-1)[0] ?? "?"})`),
    check.bot.ok
      ? line.ok(`the as_token acts as ${check.bot.userId}`)
      : line.warn(`the homeserver refused the bot: ${check.bot.why} (is the registration loaded, with this as_token?)`),
    check.ping.ok
      ? line.ok(`the homeserver reached the Worker's application service${check.ping.ms !== null ? ` in ${check.ping.ms} ms` : ""}`)
      : line.warn(`the homeserver could not ping the Worker: ${check.ping.why} (is the Worker deployed with MATRIX_HS_TOKEN, at ${ctx.workerUrl}?)`),
  ];
  return { json: { registration: yaml, made, ...check }, lines, exitCode: ok ? 0 : 1 };
}
