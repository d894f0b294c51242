import { Hono } from "hono";
import { relayObject } from "../conversations/stubs.ts";
import { CLOSE } from "../relay/frames.ts";
import { checkMediaLink, checkUploadLink, gatewayOfMediaKey, MEDIA_PATH, UPLOAD_LINK_TTL_S, UPLOAD_PATH } from "../relay/media.ts";
import { REFUSAL_REASONS, refuseSocket, TOKEN_HEADER } from "../relay/socket.ts";
import { verifyRelayToken, type TokenCheck } from "../relay/token.ts";
import { settings } from "../settings.ts";
import { errorBody } from "./errors.ts";

function reasonFor(check: Extract<TokenCheck, { ok: false }>): string {
  if (check.reason === "expired") return REFUSAL_REASONS.expired;
  if (check.reason === "no_expiry") return REFUSAL_REASONS.noExpiry;
  if (check.reason === "too_long") return REFUSAL_REASONS.tooLong;
  return "unauthorized";
}

/**
 * `GET /relay`: a gateway's WebSocket. The bearer token is checked against RELAY_SECRETS
 * before the gateway's Relay object is involved; failures close with 4401 (reason
 * `expired` for a valid but expired token). The gateway id comes from the token only: it
 * names the Relay object (no header carries it), which then refuses a token it has seen
 * before (single use).
 */
export async function relayUpgrade(request: Request, env: Env): Promise<Response> {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    return Response.json(errorBody("upgrade_required", "GET /relay is a WebSocket endpoint"), { status: 426, headers: { upgrade: "websocket" } });
  }
  const token = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!token) return refuseSocket(CLOSE.unauthorized, "unauthorized");
  const check = await verifyRelayToken(token, settings(env).relaySecrets, Math.floor(Date.now() / 1000));
  if (!check.ok) return refuseSocket(CLOSE.unauthorized, reasonFor(check));
  const headers = new Headers(request.headers);
  headers.delete("authorization");
  headers.set(TOKEN_HEADER, `${check.exp}:${check.sig}`);
  return relayObject(env, check.gatewayId).fetch(new Request(request.url, { method: "GET", headers }));
}

/** `GET /v1/relay`: each configured gateway's connection and buffer. */
export const relayStatusRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => {
  const ids = [...settings(c.env).relaySecrets.keys()];
  const gateways = await Promise.all(ids.map(async (id) => ({ id, ...(await relayObject(c.env, id).status()) })));
  return c.json({ gateways });
});

/**
 * `GET /relay/media/<key>?exp=&sig=`: an attachment of a relayed message, for the gateway
 * whose secret signed the link (any of its secrets, for rotation), until it expires. The
 * key names the gateway; nothing else in the bucket can be reached this way.
 */
export async function relayMedia(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  let key: string;
  try {
    key = url.pathname.slice(MEDIA_PATH.length).split("/").map(decodeURIComponent).join("/");
  } catch {
    return Response.json(errorBody("not_found", "no such attachment"), { status: 404 });
  }
  const gatewayId = gatewayOfMediaKey(key);
  const secrets = gatewayId ? settings(env).relaySecrets.get(gatewayId) : undefined;
  if (!gatewayId || !secrets || key.split("/").includes("..")) return Response.json(errorBody("not_found", "no such attachment"), { status: 404 });
  const check = await checkMediaLink(key, url.searchParams.get("exp"), url.searchParams.get("sig"), secrets, Math.floor(Date.now() / 1000));
  if (!check.ok)
    return Response.json(errorBody("unauthorized", check.reason === "expired" ? "this media link has expired" : "bad or missing media link signature"), {
      status: 401,
    });
  const obj = await env.FILES.get(key);
  if (!obj) return Response.json(errorBody("not_found", "this attachment is gone"), { status: 404 });
  return new Response(obj.body, {
    headers: {
      "content-type": obj.httpMetadata?.contentType ?? "application/octet-stream",
      "content-length": String(obj.size),
      "cache-control": "private, no-store",
    },
  });
}

/**
 * `PUT /relay/upload/<key>?exp=&sig=`: a file a bridging gateway received (a Signal
 * attachment), put with a link it signed with its own secret for that one key, at most
 * `ATTACHMENT_MAX_BYTES` (413 above). The edge then reads it as the platform's attachment,
 * like any other (limits, R2); it is deleted after the relayed-media retention.
 */
export async function relayUpload(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  let key: string;
  try {
    key = url.pathname.slice(UPLOAD_PATH.length).split("/").map(decodeURIComponent).join("/");
  } catch {
    return Response.json(errorBody("bad_request", "malformed upload path"), { status: 400 });
  }
  const gatewayId = gatewayOfMediaKey(key);
  const secrets = gatewayId ? settings(env).relaySecrets.get(gatewayId) : undefined;
  const bridged = gatewayId !== null && Object.values(settings(env).platforms).some((p) => p.bridge === gatewayId);
  if (!gatewayId || !secrets || !bridged || !key.startsWith(`relay/${gatewayId}/bridged/`) || key.split("/").includes(".."))
    return Response.json(errorBody("not_found", "no upload for this key"), { status: 404 });
  const nowS = Math.floor(Date.now() / 1000);
  const exp = url.searchParams.get("exp");
  const check = await checkUploadLink(key, exp, url.searchParams.get("sig"), secrets, nowS);
  if (!check.ok || Number(exp) > nowS + UPLOAD_LINK_TTL_S)
    return Response.json(errorBody("unauthorized", check.ok ? "upload links live at most 5 minutes" : `bad upload link (${check.reason})`), { status: 401 });
  const max = settings(env).attachments.maxBytes;
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (!(declared >= 0)) return Response.json(errorBody("length_required", "send Content-Length"), { status: 411 });
  if (declared > max) return Response.json(errorBody("too_large", `${declared} bytes is over ATTACHMENT_MAX_BYTES (${max})`), { status: 413 });
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > max) return Response.json(errorBody("too_large", `over ATTACHMENT_MAX_BYTES (${max})`), { status: 413 });
  await env.FILES.put(key, bytes, { httpMetadata: { contentType: request.headers.get("content-type") ?? "application/octet-stream" } });
  await relayObject(env, gatewayId).keepUpload(key);
  return Response.json({ key }, { status: 201 });
}
