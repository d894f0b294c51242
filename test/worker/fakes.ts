import { FakeLlm } from "../support/fake-llm.ts";
import { FakeNet } from "../support/fake-net.ts";
import { FakeDiscord, FakeSlack, FakeTelegram } from "../support/fake-platforms.ts";
import { ServerLog } from "../support/mcp-server.ts";

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
