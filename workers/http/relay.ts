import { Hono } from "hono";
import { GATEWAY_HEADER } from "../../durable-objects/relay.ts";
import { setting } from "../config.ts";
import { relayObject } from "../relay/config.ts";
import { CLOSE } from "../relay/frames.ts";
import { parseRelaySecrets, verifyRelayToken } from "../relay/token.ts";
import { errorBody } from "./errors.ts";

/** Accepts the upgrade and closes it at once, so the client sees the code and reason. */
function refuse(code: number, reason: string): Response {
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.close(code, reason);
  return new Response(null, { status: 101, webSocket: client });
}

/**
 * `GET /relay`: a gateway's WebSocket. The bearer token is checked against RELAY_SECRETS
 * before the gateway's Relay object is involved; failures close with 4401 (reason
 * `expired` for a valid but expired token). The gateway id comes from the token only.
 */
export async function relayUpgrade(request: Request, env: Env): Promise<Response> {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    return Response.json(errorBody("upgrade_required", "GET /relay is a WebSocket endpoint"), { status: 426, headers: { upgrade: "websocket" } });
  }
  const token = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!token) return refuse(CLOSE.unauthorized, "unauthorized");
  const check = await verifyRelayToken(token, parseRelaySecrets(setting(env.RELAY_SECRETS)), Math.floor(Date.now() / 1000));
  if (!check.ok) return refuse(CLOSE.unauthorized, check.reason === "expired" ? "expired" : "unauthorized");
  const headers = new Headers(request.headers);
  headers.delete("authorization");
  headers.set(GATEWAY_HEADER, check.gatewayId);
  return relayObject(env, check.gatewayId).fetch(new Request(request.url, { method: "GET", headers }));
}

/** `GET /v1/relay`: each configured gateway's connection and buffer. */
export const relayStatusRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => {
  const ids = [...parseRelaySecrets(setting(c.env.RELAY_SECRETS)).keys()];
  const gateways = await Promise.all(ids.map(async (id) => ({ id, ...(await relayObject(c.env, id).status()) })));
  return c.json({ gateways });
});
