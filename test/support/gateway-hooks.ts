import { onTestFailed, onTestFinished } from "vitest";
import type { GatewayProcess } from "./e2e.ts";

/**
 * For a gateway an e2e test started: when the test fails, its stderr is printed; when the test
 * ends, passed or not, a gateway still running is killed, so a failed test does not leave one
 * connected under the same gateway id for the next test to contend with (one failure in the
 * relay suite once became three 20-second timeouts after it). Call it inside the test.
 */
export function watchGateway(gw: GatewayProcess, label: string): GatewayProcess {
  onTestFailed(() => console.error(`--- ${label}: the gateway's stderr\n${gw.stderr()}`));
  onTestFinished(() => {
    if (gw.child.exitCode === null && gw.child.signalCode === null) gw.child.kill("SIGKILL");
  });
  return gw;
}
