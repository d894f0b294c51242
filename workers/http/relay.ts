import { Hono } from "hono";
import { relayObject } from "../conversations/stubs.ts";
import { CLOSE } from "../relay/frames.ts";
import { checkMediaLink, gatewayOfMediaKey, MEDIA_PATH } from "../relay/media.ts";
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
