import type { PlatformModule } from "../module.ts";
import { WhatsAppAdapter } from "./index.ts";
import { whatsappSetupSteps } from "./setup.ts";

export const whatsappPlatform: PlatformModule = {
  build: (v) =>
    new WhatsAppAdapter({
      accessToken: v.WHATSAPP_ACCESS_TOKEN ?? "",
      appSecret: v.WHATSAPP_APP_SECRET ?? "",
      verifyToken: v.WHATSAPP_VERIFY_TOKEN ?? "",
      phoneNumberId: v.WHATSAPP_PHONE_NUMBER_ID ?? "",
      apiBase: v.WHATSAPP_API_BASE,
      handoffTemplate: v.WHATSAPP_HANDOFF_TEMPLATE ?? null,
    }),
  setup: whatsappSetupSteps,
};
