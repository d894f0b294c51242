import { graph, type GraphSettings } from "./api.ts";
import { errorMessage } from "../../log/index.ts";

/** Meta's customer service window: free-form messages only this long after the user's last message. */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

/** Why a handoff cannot write first (the CLI, API and console show it). */
export const OUTSIDE_WINDOW = "WhatsApp lets the bot write first only within 24 h of your last message: message the bot, or set WHATSAPP_HANDOFF_TEMPLATE";

/** `name` or `name:language` (default `en_US`), as WHATSAPP_HANDOFF_TEMPLATE is written. */
export function parseTemplate(setting: string): { name: string; language: string } {
  const at = setting.indexOf(":");
  return at < 0 ? { name: setting.trim(), language: "en_US" } : { name: setting.slice(0, at).trim(), language: setting.slice(at + 1).trim() || "en_US" };
}

/**
 * The 24-hour rule for a handoff into a WhatsApp chat: inside the window, go on; outside it,
 * send the handoff template (the session title its one body parameter) when one is set, and
 * it is the handoff's notice; else refuse with {@link OUTSIDE_WINDOW}. Nothing is sent inside
 * the window, and nothing at all before the answer is known.
 */
export async function handoffWindow(
  g: GraphSettings,
  opts: { phoneNumberId: string; template: string | null; now: number },
  waId: string,
  title: string,
  lastInboundAt: number | null,
): Promise<{ ok: true; announced?: boolean } | { ok: false; reason: string }> {
  if (lastInboundAt !== null && opts.now - lastInboundAt < WINDOW_MS) return { ok: true };
  if (!opts.template) return { ok: false, reason: OUTSIDE_WINDOW };
  const t = parseTemplate(opts.template);
  const body = {
    messaging_product: "whatsapp",
    recipient_type: "individual",
    to: waId,
    type: "template",
    template: { name: t.name, language: { code: t.language }, components: [{ type: "body", parameters: [{ type: "text", text: title.slice(0, 200) }] }] },
  };
  try {
    await graph(g, "POST", `${encodeURIComponent(opts.phoneNumberId)}/messages`, body, "handoff template");
  } catch (err) {
    return {
      ok: false,
      reason: `outside WhatsApp's 24-hour window, and the handoff template ${t.name} was refused: ${errorMessage(err)}`,
    };
  }
  return { ok: true, announced: true };
}
