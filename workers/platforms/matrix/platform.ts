import type { PlatformModule } from "../module.ts";
import { MatrixAdapter } from "./index.ts";
import { matrixSetupSteps } from "./setup.ts";

export const matrixPlatform: PlatformModule = {
  build: (v) =>
    new MatrixAdapter({
      homeserverUrl: v.MATRIX_HOMESERVER_URL ?? "",
      asToken: v.MATRIX_AS_TOKEN ?? "",
      hsToken: v.MATRIX_HS_TOKEN ?? "",
      botUser: v.MATRIX_BOT_USER ?? "",
    }),
  setup: matrixSetupSteps,
};
