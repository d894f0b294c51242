import type { PlatformModule } from "../module.ts";
import { DiscordGatewayConnection } from "./gateway/connection.ts";
import { DiscordAdapter } from "./index.ts";
import { discordSetupSteps } from "./setup.ts";

export const discordPlatform: PlatformModule = {
  build: (v) =>
    new DiscordAdapter({
      applicationId: v.DISCORD_APPLICATION_ID ?? "",
      publicKey: v.DISCORD_PUBLIC_KEY ?? "",
      botToken: v.DISCORD_BOT_TOKEN,
      apiBase: v.DISCORD_API_BASE,
      gateway: v.DISCORD_GATEWAY === "on",
    }),
  setup: discordSetupSteps,
  connection: {
    on: (v) => v.DISCORD_GATEWAY === "on" && Boolean(v.DISCORD_BOT_TOKEN),
    open: (v, ports) => new DiscordGatewayConnection({ botToken: v.DISCORD_BOT_TOKEN ?? "", apiBase: v.DISCORD_API_BASE }, ports),
  },
};
