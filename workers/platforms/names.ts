/** Platforms the gateway knows. (No runtime imports: shared with the Node relay gateway.) */
export const PLATFORMS = ["telegram", "discord", "slack"] as const;
export type PlatformName = (typeof PLATFORMS)[number];

export function isPlatformName(v: string): v is PlatformName {
  return (PLATFORMS as readonly string[]).includes(v);
}
