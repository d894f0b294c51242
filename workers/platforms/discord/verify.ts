import { verifyKey } from "discord-interactions";

/** Ed25519 over timestamp + raw body (`X-Signature-Ed25519`, `X-Signature-Timestamp`). */
export async function verifyDiscord(headers: Headers, rawBody: string, publicKeyHex: string): Promise<boolean> {
  const signature = headers.get("x-signature-ed25519");
  const timestamp = headers.get("x-signature-timestamp");
  if (!signature || !timestamp || !/^[0-9a-f]+$/i.test(signature)) return false;
  try {
    return await verifyKey(rawBody, signature, timestamp, publicKeyHex);
  } catch {
    return false;
  }
}
