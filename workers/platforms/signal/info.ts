import type { PlatformInfo } from "../info.ts";
import { signalLink } from "./link.ts";

export const signalInfo = {
  name: "signal",
  label: "Signal",
  threadWord: "chat",
  // No setting of its own enables it: BRIDGE_PLATFORMS naming a gateway for it does (workers/settings.ts).
  required: [],
  setupHelp: "nothing to set up at the edge: run hermes-edge gateway --bridge signal where signal-cli runs (docs/platforms/signal.md)",
  link: signalLink,
} as const satisfies PlatformInfo<"signal">;
