import { afterEach } from "vitest";
import { emptyGatewayBuffer } from "./helpers.ts";

/**
 * Every relay test leaves gateway gw1's buffer empty. Here, in a setup file, the hook runs in
 * every file: a worker's files share one module cache (`isolate: false`), so the same hook at
 * the top of helpers.ts registered only in the first file that imported it, and in some orders
 * a later file read frames an earlier one had left (test/node/test-layout.test.ts keeps hooks
 * out of shared modules).
 */
afterEach(emptyGatewayBuffer);
