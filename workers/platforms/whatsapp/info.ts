import type { PlatformInfo } from "../info.ts";
import { whatsappLink } from "./link.ts";

export const whatsappInfo = {
  name: "whatsapp",
  label: "WhatsApp",
  threadWord: "chat",
  required: ["WHATSAPP_ACCESS_TOKEN", "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN", "WHATSAPP_PHONE_NUMBER_ID"],
  setupHelp:
    "checks WHATSAPP_ACCESS_TOKEN and the number (GET /<phone-number-id>), subscribes\nthe app to WHATSAPP_BUSINESS_ACCOUNT_ID, prints the callback URL and verify token",
  link: whatsappLink,
} as const satisfies PlatformInfo<"whatsapp">;
