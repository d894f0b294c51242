/** What {@link normaliseRelayUrl} made of a configured URL. */
export type RelayUrl = { ok: true; url: string } | { ok: false; error: string };

const SCHEMES: Record<string, string> = { "http:": "ws:", "https:": "wss:", "ws:": "ws:", "wss:": "wss:" };

/**
 * The WebSocket URL of a connector's relay endpoint: `http` becomes `ws`, `https` becomes
 * `wss`, and `/relay` is appended unless the path already ends with it (trailing slashes
 * ignored). Query and fragment are kept as given; any other scheme is refused.
 */
export function normaliseRelayUrl(input: string): RelayUrl {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return { ok: false, error: `not a URL: '${input}'` };
  }
  const scheme = SCHEMES[url.protocol];
  if (!scheme) return { ok: false, error: `unsupported scheme '${url.protocol.replace(/:$/, "")}' (use https://, http://, wss:// or ws://)` };
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/relay") ? path : `${path}/relay`;
  // URL refuses to switch a special scheme to a non-special one, so rebuild the string.
  return { ok: true, url: `${scheme}${url.href.slice(url.protocol.length)}` };
}
