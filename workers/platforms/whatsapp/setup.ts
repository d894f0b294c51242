import { graph, type GraphSettings } from "./api.ts";
import { phoneNumberInfo, type PhoneNumberInfo } from "./health.ts";
import { errorMessage } from "../../log/index.ts";

/** What `hermes-edge setup whatsapp` found and did. */
export interface WhatsAppSetup {
  number: PhoneNumberInfo;
  /** The app was subscribed to the business account's webhooks (null: no WHATSAPP_BUSINESS_ACCOUNT_ID). */
  subscribed: boolean | null;
  /** Where Meta must deliver, and the verify token to paste beside it (the app dashboard's Webhooks page). */
  callbackUrl: string;
}

/**
 * Checks the token and number (`GET /{phone-number-id}`), subscribes the app to the
 * business account's webhooks where its id is given (`POST /{waba-id}/subscribed_apps`).
 * The callback URL and verify token are saved in the app dashboard: the Graph API has no call
 * for them with a user token. Throws with the next step when Meta refuses.
 */
export async function setupWhatsApp(g: GraphSettings, opts: { phoneNumberId: string; businessAccountId: string | null; url: string }): Promise<WhatsAppSetup> {
  let number: PhoneNumberInfo;
  try {
    number = await phoneNumberInfo(g, opts.phoneNumberId);
  } catch (err) {
    throw new Error(`Meta refused the phone number lookup: ${errorMessage(err)} (are WHATSAPP_ACCESS_TOKEN and WHATSAPP_PHONE_NUMBER_ID right?)`);
  }
  let subscribed: boolean | null = null;
  if (opts.businessAccountId) {
    try {
      const r = await graph<{ success?: unknown }>(g, "POST", `${encodeURIComponent(opts.businessAccountId)}/subscribed_apps`, {}, "subscribe the app");
      subscribed = r.success === true;
    } catch (err) {
      throw new Error(
        `Meta refused to subscribe the app to business account ${opts.businessAccountId}: ${errorMessage(err)} (is WHATSAPP_BUSINESS_ACCOUNT_ID right, and does the token have whatsapp_business_management?)`,
      );
    }
  }
  return { number, subscribed, callbackUrl: `${opts.url.replace(/\/+$/, "")}/webhooks/whatsapp` };
}
