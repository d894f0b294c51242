import { PlatformApiError, type PlatformHealth } from "../types.ts";
import { graph, type GraphSettings } from "./api.ts";
import { errorMessage } from "../../log/index.ts";

/** What `GET /{phone-number-id}` says about the sending number. */
export interface PhoneNumberInfo {
  displayPhoneNumber: string;
  verifiedName: string;
  /** GREEN, YELLOW, RED or UNKNOWN: Meta's rating of recent messages. */
  qualityRating: string;
}

/** The sending number as Meta sees it (checks the token and the number id together). */
export async function phoneNumberInfo(g: GraphSettings, phoneNumberId: string): Promise<PhoneNumberInfo> {
  const r = await graph<{ display_phone_number?: unknown; verified_name?: unknown; quality_rating?: unknown }>(
    g,
    "GET",
    `${encodeURIComponent(phoneNumberId)}?fields=display_phone_number,verified_name,quality_rating`,
    undefined,
    "phone number lookup",
  );
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  return { displayPhoneNumber: str(r.display_phone_number), verifiedName: str(r.verified_name), qualityRating: str(r.quality_rating) || "UNKNOWN" };
}

/**
 * The token and phone number checked against Meta (`hermes-edge status`). Meta's API does not
 * tell where it delivers webhooks; `setup whatsapp` prints the URL to paste.
 */
export async function whatsappHealth(g: GraphSettings, phoneNumberId: string, origin: string): Promise<PlatformHealth> {
  try {
    const n = await phoneNumberInfo(g, phoneNumberId);
    const problems: PlatformHealth["problems"] = [];
    if (n.qualityRating === "RED")
      problems.push({
        problem: "Meta rates this number's recent messages low quality (RED): its sending limit may drop",
        fix: "see the number's Insights in WhatsApp Manager",
      });
    return {
      detail: `number ${n.displayPhoneNumber || phoneNumberId} (${n.verifiedName || "no verified name"}) · quality ${n.qualityRating} · webhooks should go to ${origin}/webhooks/whatsapp`,
      problems,
    };
  } catch (err) {
    const refused = err instanceof PlatformApiError && (err.code === "unauthorized" || err.code === "not_found" || err.code === "rejected");
    return {
      detail: refused ? "token or number refused" : "not reachable",
      problems: [
        {
          problem: refused ? `Meta refused the phone number lookup: ${err.message}` : `cannot reach WhatsApp: ${errorMessage(err)}`,
          fix: refused ? "check WHATSAPP_PHONE_NUMBER_ID and the token: npx wrangler secret put WHATSAPP_ACCESS_TOKEN" : "try again later",
        },
      ],
    };
  }
}
