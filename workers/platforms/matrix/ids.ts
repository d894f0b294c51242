/**
 * Matrix identifiers as this Worker accepts them (spec "Appendices: Identifier Grammar"). Room and
 * event ids are opaque: room versions 1-2 write `!opaque:server` and `$opaque:server`, version 3
 * writes event ids in standard base64 (with `+` and `/`), version 4 on URL-safe base64, and room
 * version 12 room ids as `!` and a hash without a server. Always percent-encoded in paths.
 */

/** A server name: a DNS name, IPv4 or bracketed IPv6, with an optional port. */
const SERVER = String.raw`(?:[A-Za-z0-9.-]{1,255}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?`;

/** `!opaque:server` or (room version 12) `!hash`. */
export const ROOM_ID = new RegExp(String.raw`^![A-Za-z0-9._~=+-]{1,255}(?::${SERVER})?$`);
/** `$opaque:server` (v1-2) or `$base64` (v3+: `+` and `/` in v3, `-` and `_` from v4). */
export const EVENT_ID = new RegExp(String.raw`^\$[A-Za-z0-9._~=+/-]{1,255}(?::${SERVER})?$`);
/** `@localpart:server`; historical localparts allow more than today's `[a-z0-9._=/+-]`. */
export const USER_ID = new RegExp(String.raw`^@[\x21-\x39\x3B-\x7E]{1,255}:${SERVER}$`);
/** An `mxc://server/media-id` content URI. */
export const MXC = new RegExp(String.raw`^mxc://(${SERVER})/([A-Za-z0-9_-]{1,255})$`);

export const isRoomId = (s: string) => ROOM_ID.test(s);
export const isEventId = (s: string) => EVENT_ID.test(s);
export const isUserId = (s: string) => USER_ID.test(s);

/** The localpart of a user id (`hermes` of `@hermes:example.org`). */
export function localpartOf(userId: string): string {
  const at = userId.indexOf(":");
  return userId.slice(1, at > 0 ? at : undefined);
}
