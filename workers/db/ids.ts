/** Random bytes in a session id: 64 bits, so ids made in the same second do not meet. */
export const SESSION_ID_RANDOM_BYTES = 8;

/** Session ids sort by creation time and stay readable: `20261201_064355_3f9a2c0b7d1e4a65`. */
export function newSessionId(now: number): string {
  const d = new Date(now);
  const p = (n: number) => String(n).padStart(2, "0");
  const stamp = `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}_${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
  const rand = new Uint8Array(SESSION_ID_RANDOM_BYTES);
  crypto.getRandomValues(rand);
  return `${stamp}_${[...rand].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A one-line title from the first words of a message. */
export function titleFrom(text: string, max = 60): string | null {
  const one = text.replace(/\s+/g, " ").trim();
  if (!one) return null;
  return one.length <= max ? one : `${one.slice(0, max - 1).trimEnd()}…`;
}
