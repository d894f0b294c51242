/**
 * WhatsApp Cloud API webhook bodies in the shape Meta's documentation shows (see
 * test/corpus/whatsapp for real ones), trimmed to what the Worker reads.
 */
import { WHATSAPP_TEST } from "./signing.ts";

let seq = 0;
const next = () => ++seq;

/** A fresh wamid, as Meta's look (base64 after `wamid.`). */
export const wamid = () => `wamid.HBgLMTU1NTAwMDEwMDEVAgASGBQzQTk${String(next()).padStart(6, "0")}AA==`;

export const wa = {
  /** The envelope around `value`s, one change each, in one entry. */
  envelope(...values: unknown[]) {
    return { object: "whatsapp_business_account", entry: [{ id: WHATSAPP_TEST.waba, changes: values.map((value) => ({ field: "messages", value })) }] };
  },
  /** A `messages` change from `from` carrying `messages`. */
  value(from: string, messages: unknown[], name = "Test User") {
    return {
      messaging_product: "whatsapp",
      metadata: { display_phone_number: "15550100001", phone_number_id: WHATSAPP_TEST.phoneNumberId },
      contacts: [{ profile: { name }, wa_id: from }],
      messages,
    };
  },
  message(from: string, type: string, content: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    return { from, id: wamid(), timestamp: String(1_700_000_000 + next()), type, ...content, ...extra };
  },
  text(from: string, body: string, extra: Record<string, unknown> = {}) {
    return wa.message(from, "text", { text: { body } }, extra);
  },
  /** One text message in a delivery of its own. */
  dm(from: string, body: string) {
    return wa.envelope(wa.value(from, [wa.text(from, body)]));
  },
  status(id: string, status: string, recipient: string, errors?: unknown[]) {
    return {
      messaging_product: "whatsapp",
      metadata: { display_phone_number: "15550100001", phone_number_id: WHATSAPP_TEST.phoneNumberId },
      statuses: [{ id, status, timestamp: "1700000100", recipient_id: recipient, ...(errors ? { errors } : {}) }],
    };
  },
};
