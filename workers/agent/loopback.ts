/**
 * The one loopback check: whether a host names this machine, where plain http is fine
 * (wrangler dev, a local MCP server, the CLI talking to `npm start`). Pure, for the Worker
 * and the CLI alike.
 */

/** 127.0.0.0/8 in dotted form, each part 0–255. */
const IPV4_LOOPBACK = /^127(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
/** ::1, and IPv4-mapped 127.x.y.z as the URL parser writes it (`::ffff:7f00:1`). */
const IPV6_LOOPBACK = /^(?:::1|::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4})$/;

/**
 * Whether a hostname, as `URL.hostname` gives it (lower-case, IPv4 normalised, IPv6 in
 * brackets) or bare, is loopback: `localhost` and names under it (RFC 6761), 127.0.0.0/8,
 * ::1 and IPv4-mapped 127.x. A name that merely starts with `127.` is not.
 */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (IPV4_LOOPBACK.test(h)) return true;
  return IPV6_LOOPBACK.test(h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h);
}

/** Whether an absolute URL's host is loopback; false for anything that is not a URL. */
export function isLoopbackUrl(url: string | URL): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname);
  } catch {
    return false;
  }
}
