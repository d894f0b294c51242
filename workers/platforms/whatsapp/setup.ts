import { graph, type GraphSettings } from "./api.ts";
import { phoneNumberInfo, type PhoneNumberInfo } from "./health.ts";
import { errorMessage } from "../../log/index.ts";
import { line, type SetupContext, type SetupReport } from "../module.ts";

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

/**
 * `hermes-edge setup whatsapp`: checks the token and number, subscribes the app to the business
 * account's webhooks where WHATSAPP_BUSINESS_ACCOUNT_ID is set, and prints what to paste in the
 * app dashboard (Meta's API cannot set the callback URL with a system user's token).
 */
export async function whatsappSetupSteps(ctx: SetupContext): Promise<SetupReport> {
  const found = ctx.need({
    WHATSAPP_ACCESS_TOKEN: "a system user's token with whatsapp_business_messaging (Business settings → System users)",
    WHATSAPP_PHONE_NUMBER_ID: "the number's id from the app's WhatsApp → API Setup page (not the phone number)",
    WHATSAPP_VERIFY_TOKEN: `any random string, the same on the Worker (npx wrangler secret put WHATSAPP_VERIFY_TOKEN); for example ${ctx.randomSecret()}`,
  });
  ctx.warnIfLocal();
  const g = { apiBase: ctx.setting("WHATSAPP_API_BASE") ?? "https://graph.facebook.com/v23.0", accessToken: found.WHATSAPP_ACCESS_TOKEN, fetch: ctx.fetch };
  const waba = ctx.setting("WHATSAPP_BUSINESS_ACCOUNT_ID") ?? null;
  const result = await setupWhatsApp(g, { phoneNumberId: found.WHATSAPP_PHONE_NUMBER_ID, businessAccountId: waba, url: ctx.workerUrl });
  const n = result.number;
  const lines = [
    line.ok(
      `${n.displayPhoneNumber || found.WHATSAPP_PHONE_NUMBER_ID} (${n.verifiedName || "no verified name"}): the token and number work; quality ${n.qualityRating}`,
    ),
    result.subscribed
      ? line.ok(`the app is subscribed to business account ${waba}'s webhooks`)
      : result.subscribed === false
        ? line.warn(`Meta did not confirm the subscription to business account ${waba}`)
        : line.dim("(WHATSAPP_BUSINESS_ACCOUNT_ID is not set: the app's subscription to the account was not checked)"),
    line.text(),
    line.text("In the app dashboard (developers.facebook.com → your app → WhatsApp → Configuration → Webhook), paste:"),
    line.text(`  Callback URL:  ${result.callbackUrl}`),
    line.text(`  Verify token:  ${found.WHATSAPP_VERIFY_TOKEN}`),
    line.text("then subscribe the webhook field 'messages'. Set WHATSAPP_APP_SECRET (App settings → Basic) on the Worker; it checks every delivery."),
  ];
  return { json: { ...result, verifyToken: found.WHATSAPP_VERIFY_TOKEN }, lines, exitCode: result.subscribed === false ? 1 : 0 };
}
