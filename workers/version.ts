/**
 * The one version: the Worker's (`/health`, `hermes-edge status`), the CLI's (`--version`)
 * and the MCP client's. A test holds it equal to package.json's.
 */
export const VERSION = "0.1.0";
