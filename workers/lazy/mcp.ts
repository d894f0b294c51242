// What workers/lazy/mcp.js holds (built from this file by workers/lazy/build.mjs): the parts
// of the MCP SDK the client uses, with one JSON-schema validator (@cfworker/json-schema;
// the build leaves ajv, the SDK's default, out).
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
export { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
