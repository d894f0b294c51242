import { FakeLlm } from "../support/fake-llm.ts";
import { FakeNet } from "../support/fake-net.ts";
import { ServerLog } from "../support/mcp-server.ts";
import { FakeDiscord, FakeFiles, FakeSlack, FakeTelegram } from "../support/fake-platforms.ts";
import { FakeHomeserver } from "../support/fake-matrix.ts";
import { FakeWhatsApp } from "../support/fake-whatsapp.ts";
import { SLACK_TEST, WHATSAPP_TEST } from "../support/signing.ts";

/**
 * The fakes every workerd test talks to, one instance per runtime: test files share the
 * runtime (isolate: false), and the setup file's hooks reset these same instances.
 */
export const net = new FakeNet();
/** The model provider behind LLM_BASE_URL (https://llm.test/v1). */
export const llm = new FakeLlm();
export const telegram = new FakeTelegram();
export const discord = new FakeDiscord();
export const slack = new FakeSlack();
/** What the fake MCP server at https://mcp.test saw (MCP_SERVERS of the relay project). */
export let mcpLog = new ServerLog();
/** A fresh log for the next test. */
export function resetMcpLog(): ServerLog {
  mcpLog = new ServerLog();
  return mcpLog;
}
/** Slack's file host (`url_private`), which wants the bot token. */
export const slackFiles = new FakeFiles(SLACK_TEST.token);
/** Discord's CDN (attachment URLs are signed, no token). */
export const discordCdn = new FakeFiles();
/** Meta's Graph API (WHATSAPP_API_BASE https://graph.whatsapp.test/v23.0). */
export const whatsapp = new FakeWhatsApp();
/** WhatsApp's media host (the URLs `GET /{media-id}` answers), which wants the access token. */
export const whatsappMedia = new FakeFiles(WHATSAPP_TEST.token);
/** The Matrix homeserver (MATRIX_HOMESERVER_URL https://matrix.test): client-server API and media. */
export const homeserver = new FakeHomeserver();
