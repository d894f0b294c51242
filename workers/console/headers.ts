/**
 * The console's Content-Security-Policy: only this origin's own scripts, styles, images
 * and connections; no inline script or style, no framing, no <base>, forms post here only.
 * A transcript that smuggled markup past the renderer still could not run or load anything.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/** Headers every console response gets, the page, its files and the sign-in routes alike. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()",
};

/** `res` with the console's headers added (a copy: responses from bindings are immutable). */
export function withConsoleHeaders(res: Response): Response {
  const out = new Response(res.body, res);
  for (const [k, v] of Object.entries(CONSOLE_HEADERS)) out.headers.set(k, v);
  return out;
}
