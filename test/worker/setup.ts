import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, expect } from "vitest";
import { webMcpHandler } from "../support/mcp-server.ts";
import { relayEnv } from "./relay-config.ts";
import { discord, discordCdn, homeserver, llm, net, resetMcpLog, slack, slackFiles, telegram, whatsapp, whatsappMedia } from "./fakes.ts";

export { discord, discordCdn, homeserver, llm, mcpLog, net, slack, slackFiles, telegram, whatsapp, whatsappMedia } from "./fakes.ts";

/** The network of every workerd test: fakes only. */
globalThis.fetch = net.fetch;

beforeAll(async () => {
  const migrations = (env as unknown as { TEST_MIGRATIONS: D1Migration[] }).TEST_MIGRATIONS;
  // The default configuration's database, and the relay configuration's (test/worker/relay-config.ts).
  await applyD1Migrations(env.DB, migrations);
  await applyD1Migrations(relayEnv(env).DB, migrations);
  // The Worker's modules load on its first request: paid here, not inside a file's first test.
  await exports.default.fetch("http://edge.test/health");
});

beforeEach(() => {
  net.reset();
  llm.reset();
  telegram.reset();
  discord.reset();
  slack.reset();
  slackFiles.reset();
  discordCdn.reset();
  whatsapp.reset();
  whatsappMedia.reset();
  homeserver.reset();
  net.route("https://llm.test", (req) => llm.handle(req));
  net.route("https://telegram.test", (req) => telegram.handle(req));
  net.route("https://discord.test", (req) => discord.handle(req));
  net.route("https://slack.test", (req) => slack.handle(req));
  net.route("https://hooks.slack.test", (req) => slack.handle(req));
  net.route("https://mcp.test", webMcpHandler({ log: resetMcpLog() }));
  net.route("https://files.slack.test", (req) => slackFiles.handle(req));
  net.route("https://cdn.discord.test", (req) => discordCdn.handle(req));
  net.route("https://graph.whatsapp.test", (req) => whatsapp.handle(req));
  net.route("https://media.whatsapp.test", (req) => whatsappMedia.handle(req));
  net.route("https://matrix.test", (req) => homeserver.handle(req));
});

afterEach(() => {
  expect(net.violations, "outbound requests to hosts no test faked").toEqual([]);
});
