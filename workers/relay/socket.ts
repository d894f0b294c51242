/**
 * Accepts a WebSocket upgrade and closes it at once, so the client sees the close code and
 * reason (a refused HTTP upgrade would only show a failed handshake).
 */
export function refuseSocket(code: number, reason: string): Response {
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.close(code, reason);
  return new Response(null, { status: 101, webSocket: client });
}

/** The header the Worker passes the verified token's expiry and signature to the Relay object in (the gateway id is the object's name). */
export const TOKEN_HEADER = "x-hermes-relay-token";

/** Close reasons the connector uses with 4401, besides "unauthorized". */
export const REFUSAL_REASONS = { expired: "expired", replayed: "replayed", noExpiry: "token must expire", tooLong: "token lifetime over 10 minutes" } as const;
