// A tiny MCP server on stdin/stdout (the SDK's stdio server transport), started by the
// gateway tests as a child process: `node test/support/mcp-stdio-server.ts`.
// It writes a line to stderr at start, which the gateway must not print unless it fails.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "stdio-test", version: "1.0.0" });
server.registerTool("echo", { description: "Echo the text back.", inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: "text", text }],
}));
server.registerTool("pid", { description: "The server's process id." }, async () => ({ content: [{ type: "text", text: String(process.pid) }] }));
server.registerTool("secret", { description: "Tells the value of its API_KEY." }, async () => ({
  content: [{ type: "text", text: `key is ${process.env.API_KEY ?? "unset"}` }],
}));
process.stderr.write("stdio-test: server starting (debug noise)\n");
await server.connect(new StdioServerTransport());
