/**
 * A fake Graph API for WhatsApp's Cloud API (`/v23.0/…`), against web Request/Response like
 * the other fakes: messages, read receipts with typing, media look-ups, the phone number,
 * subscribed apps. Wants `Authorization: Bearer <token>`; answers Meta's error shape.
 */
import { FakeApi, type ApiCall } from "./fake-platforms.ts";
import { WHATSAPP_TEST } from "./signing.ts";

const graphError = (message: string, code: number, status = 400) =>
  Response.json({ error: { message, type: "OAuthException", code, fbtrace_id: "AbCdEf" } }, { status });

export class FakeWhatsApp extends FakeApi {
  /** Media ids → what `GET /{media-id}` answers (its url on the media host). */
  readonly media = new Map<string, { url: string; mime_type: string; file_size?: number }>();
  /** Users outside the 24-hour window: a free-form message to them fails with 131047. */
  readonly outsideWindow = new Set<string>();
  /** The message ids answered to each sent message, in order, with whom it went to. */
  readonly wamids: Array<{ to: string; id: string }> = [];

  override reset(): void {
    super.reset();
    this.wamids.length = 0;
    this.media.clear();
    this.outsideWindow.clear();
  }

  /** The texts sent to `waId`, in order. */
  texts(waId: string): string[] {
    return this.sent()
      .filter((c) => c.body.to === waId && c.body.type === "text")
      .map((c) => String((c.body.text as { body: string }).body));
  }

  /** Every `POST /{phone-number-id}/messages` that sent a message (not a read receipt). */
  sent(): ApiCall[] {
    return this.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages") && c.body.status === undefined);
  }

  /** Read receipts (with typing) sent. */
  receipts(): ApiCall[] {
    return this.calls.filter((c) => c.path.endsWith("/messages") && c.body.status === "read");
  }

  protected answer(call: ApiCall, req: Request): Response {
    if (req.headers.get("authorization") !== `Bearer ${WHATSAPP_TEST.token}`) return graphError("Invalid OAuth access token.", 190, 401);
    const path = call.path.replace(/\?.*$/, "").replace(/^\/v\d+\.\d+\//, "");
    if (call.method === "POST" && path === `${WHATSAPP_TEST.phoneNumberId}/messages`) {
      if (call.body.status === "read") return Response.json({ success: true });
      const to = String(call.body.to ?? "");
      if (call.body.type !== "template" && this.outsideWindow.has(to)) return graphError("Re-engagement message", 131047);
      const id = `wamid.fake${this.nextId()}`;
      this.wamids.push({ to, id });
      return Response.json({ messaging_product: "whatsapp", contacts: [{ input: to, wa_id: to }], messages: [{ id }] });
    }
    if (call.method === "GET" && path === WHATSAPP_TEST.phoneNumberId) {
      return Response.json({ id: WHATSAPP_TEST.phoneNumberId, display_phone_number: "+1 555-010-0001", verified_name: "Hermes Test", quality_rating: "GREEN" });
    }
    if (call.method === "POST" && path === `${WHATSAPP_TEST.waba}/subscribed_apps`) return Response.json({ success: true });
    const media = call.method === "GET" ? this.media.get(path) : undefined;
    if (media) return Response.json({ messaging_product: "whatsapp", id: path, sha256: "0".repeat(64), ...media });
    return graphError(`Unsupported ${call.method} request. Object with ID '${path}' does not exist`, 100, 400);
  }
}
