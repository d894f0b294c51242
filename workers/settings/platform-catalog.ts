import { commaList, hex, httpUrl, oneOf, text, type Parser } from "./parse.ts";
import { spec } from "./spec.ts";

/** Meta's Graph API, pinned to a version (Meta keeps each for about two years). */
const WHATSAPP_API_DEFAULT = "https://graph.facebook.com/v23.0";

/** `*_ALLOWED_USERS` / `*_ADMIN_USERS`: ids or `*`; an entry with a space in it is two ids run together. */
const userList: Parser<string | undefined> = (raw) => {
  const odd = commaList(raw).filter((id) => /\s/.test(id));
  return odd.length === 0
    ? { value: raw }
    : { value: raw, problem: `has an entry with a space in it ('${odd[0]}'), which matches nobody; separate ids with commas` };
};

/**
 * Each platform's settings, under its name as the group: what enables it (its `info.ts`
 * names them in `required`), `<NAME>_ALLOWED_USERS`, `<NAME>_ADMIN_USERS`,
 * `<NAME>_HOME_CHANNEL`, its API base. Part of the one catalog (`catalog.ts`).
 */
export const PLATFORM_CATALOG = {
  TELEGRAM_BOT_TOKEN: spec({ kind: "secret", group: "telegram", meaning: "from @BotFather; with TELEGRAM_WEBHOOK_SECRET, enables Telegram", parse: text }),
  TELEGRAM_WEBHOOK_SECRET: spec({ kind: "secret", group: "telegram", meaning: "the secret_token Telegram echoes on every webhook", parse: text }),
  TELEGRAM_HOME_CHANNEL: spec({ kind: "var", group: "telegram", meaning: "default handoff chat (/sethome overrides it)", parse: text }),
  TELEGRAM_HOME_CHANNEL_THREAD_ID: spec({ kind: "var", group: "telegram", meaning: "the topic of the default handoff chat", parse: text }),
  TELEGRAM_ALLOWED_USERS: spec({ kind: "var", group: "telegram", meaning: "user ids (comma list) or * who may run turns", default: "nobody", parse: userList }),
  TELEGRAM_ADMIN_USERS: spec({
    kind: "var",
    group: "telegram",
    meaning: "allowed users who may also /resume CLI sessions",
    default: "nobody",
    parse: userList,
  }),
  TELEGRAM_API_ROOT: spec({
    kind: "var",
    group: "telegram",
    meaning: "Bot API root",
    default: "https://api.telegram.org",
    parse: httpUrl("https://api.telegram.org", "the default https://api.telegram.org is used"),
  }),

  DISCORD_APPLICATION_ID: spec({ kind: "var", group: "discord", meaning: "the application id", default: "read from the bot token", parse: text }),
  DISCORD_PUBLIC_KEY: spec({
    kind: "var",
    group: "discord",
    meaning: "the application's public key (hex Ed25519); with DISCORD_BOT_TOKEN, enables Discord",
    parse: hex(64, "every Discord request is refused (401); copy the Public Key from the developer portal's General Information page"),
  }),
  DISCORD_BOT_TOKEN: spec({ kind: "secret", group: "discord", meaning: "the bot token (posts into handoff threads; registers commands)", parse: text }),
  DISCORD_HOME_CHANNEL: spec({ kind: "var", group: "discord", meaning: "default handoff channel", parse: text }),
  DISCORD_ALLOWED_USERS: spec({ kind: "var", group: "discord", meaning: "user ids (comma list) or * who may run turns", default: "nobody", parse: userList }),
  DISCORD_ADMIN_USERS: spec({ kind: "var", group: "discord", meaning: "allowed users who may also /resume CLI sessions", default: "nobody", parse: userList }),
  DISCORD_API_BASE: spec({
    kind: "var",
    group: "discord",
    meaning: "REST API base",
    default: "https://discord.com/api/v10",
    parse: httpUrl("https://discord.com/api/v10", "the default https://discord.com/api/v10 is used"),
  }),
  DISCORD_GATEWAY: spec({
    kind: "var",
    group: "discord",
    meaning: "on: a Durable Object holds Discord's Gateway, so DMs, mentions, replies and handoff threads work without /ask (needs Message Content Intent)",
    default: "off",
    parse: oneOf(["on", "off"], "off"),
  }),

  SLACK_BOT_TOKEN: spec({ kind: "secret", group: "slack", meaning: "xoxb-…; with SLACK_SIGNING_SECRET, enables Slack", parse: text }),
  SLACK_SIGNING_SECRET: spec({ kind: "secret", group: "slack", meaning: "verifies the v0 request signatures", parse: text }),
  SLACK_HOME_CHANNEL: spec({ kind: "var", group: "slack", meaning: "default handoff channel id", parse: text }),
  SLACK_ALLOWED_USERS: spec({ kind: "var", group: "slack", meaning: "user ids (comma list) or * who may run turns", default: "nobody", parse: userList }),
  SLACK_ADMIN_USERS: spec({ kind: "var", group: "slack", meaning: "allowed users who may also /resume CLI sessions", default: "nobody", parse: userList }),
  SLACK_API_URL: spec({
    kind: "var",
    group: "slack",
    meaning: "Web API root",
    default: "https://slack.com/api/",
    parse: httpUrl("https://slack.com/api/", "the default https://slack.com/api/ is used"),
  }),

  WHATSAPP_ACCESS_TOKEN: spec({
    kind: "secret",
    group: "whatsapp",
    meaning: "Cloud API access token (a system user's); with WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN and WHATSAPP_PHONE_NUMBER_ID, enables WhatsApp",
    parse: text,
  }),
  WHATSAPP_APP_SECRET: spec({
    kind: "secret",
    group: "whatsapp",
    meaning: "the Meta app's secret: verifies X-Hub-Signature-256 on every webhook",
    parse: text,
  }),
  WHATSAPP_VERIFY_TOKEN: spec({
    kind: "secret",
    group: "whatsapp",
    meaning: "any random string, pasted into the app dashboard: answers the subscription handshake",
    parse: text,
  }),
  WHATSAPP_PHONE_NUMBER_ID: spec({ kind: "var", group: "whatsapp", meaning: "the sending number's id (not the number itself)", parse: text }),
  WHATSAPP_BUSINESS_ACCOUNT_ID: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "the WhatsApp Business Account: setup subscribes the app to its webhooks",
    parse: text,
  }),
  WHATSAPP_HOME_CHANNEL: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "default handoff user (a WhatsApp user id, the phone number in digits)",
    parse: text,
  }),
  WHATSAPP_ALLOWED_USERS: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "WhatsApp user ids (comma list) or * who may run turns",
    default: "nobody",
    parse: userList,
  }),
  WHATSAPP_ADMIN_USERS: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "allowed users who may also /resume CLI sessions",
    default: "nobody",
    parse: userList,
  }),
  WHATSAPP_API_BASE: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "Graph API base, with its version",
    default: WHATSAPP_API_DEFAULT,
    parse: httpUrl(WHATSAPP_API_DEFAULT, `the default ${WHATSAPP_API_DEFAULT} is used`),
  }),
  WHATSAPP_HANDOFF_TEMPLATE: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "an approved template (name or name:language) sent for a handoff outside the 24-hour window, the session title as its parameter",
    parse: text,
  }),

  MATRIX_HOMESERVER_URL: spec({
    kind: "var",
    group: "matrix",
    meaning: "the homeserver's client API base (https://matrix.example.org); with MATRIX_AS_TOKEN, MATRIX_HS_TOKEN and MATRIX_BOT_USER, enables Matrix",
    parse: httpUrl(undefined, "Matrix stays off until it is an http(s) URL"),
  }),
  MATRIX_AS_TOKEN: spec({
    kind: "secret",
    group: "matrix",
    meaning: "the application service's as_token: how the Worker acts on the homeserver (hermes-edge setup matrix makes one)",
    parse: text,
  }),
  MATRIX_HS_TOKEN: spec({
    kind: "secret",
    group: "matrix",
    meaning: "the application service's hs_token: how the homeserver proves itself to the Worker",
    parse: text,
  }),
  MATRIX_BOT_USER: spec({
    kind: "var",
    group: "matrix",
    meaning: "the bot's Matrix user id (@hermes:example.org), in the registration's user namespace",
    parse: text,
  }),
  MATRIX_HOME_CHANNEL: spec({ kind: "var", group: "matrix", meaning: "default handoff room (a room id, !abc:example.org)", parse: text }),
  MATRIX_ALLOWED_USERS: spec({
    kind: "var",
    group: "matrix",
    meaning: "Matrix user ids (comma list, @alice:example.org) or * who may run turns",
    default: "nobody",
    parse: userList,
  }),
  MATRIX_ADMIN_USERS: spec({
    kind: "var",
    group: "matrix",
    meaning: "allowed users who may also /sethome and /resume CLI sessions",
    default: "nobody",
    parse: userList,
  }),
};
