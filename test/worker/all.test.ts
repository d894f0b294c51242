/// <reference types="vite/client" />
import { afterAll, afterEach, beforeAll, describe } from "vitest";
import { emptyGatewayBuffer } from "../worker-relay/helpers.ts";
import { useRelayConfig } from "./config.ts";
import { runSuites } from "./suites.ts";

// Every suite of the worker project, in one runtime (test/worker/suites.ts says why): the default
// configuration's, then the relay configuration's (test/worker/relay-config.ts), which talk to
// the Worker set up otherwise, with storage of its own.
runSuites(import.meta.glob("./*.suite.ts"));

describe("the relay configuration", () => {
  beforeAll(() => useRelayConfig(true));
  afterAll(() => useRelayConfig(false));
  // Every relay test leaves gateway gw1's buffer empty (in some orders a later suite read frames an earlier one had left).
  afterEach(emptyGatewayBuffer);
  runSuites(import.meta.glob("../worker-relay/*.suite.ts"));
});
