import type { PlatformModule, SetupReport } from "../module.ts";
import { SignalAdapter, type SignalBridge } from "./index.ts";

/** Signal is reached through the gateway that bridges it: its adapter's outbound is that gateway's Relay object. */
export const signalPlatform: PlatformModule = {
  build: (_v, host) => {
    if (!host?.bridge) throw new Error("signal is built only with the bridge of the gateway BRIDGE_PLATFORMS names");
    return new SignalAdapter({ bridge: host.bridge as SignalBridge });
  },
  setup: async (): Promise<SetupReport> => ({
    json: { platform: "signal", setup: "hermes-edge gateway --bridge signal" },
    lines: [
      { text: "Signal has nothing to set up at the edge: set BRIDGE_PLATFORMS=signal:<gatewayId> and SIGNAL_ALLOWED_USERS on the Worker," },
      { text: "then run hermes-edge gateway --bridge signal where signal-cli's daemon runs (docs/platforms/signal.md)." },
    ],
    exitCode: 0,
  }),
};
