import type { PlatformName } from "../platforms/names.ts";
import type { Parser } from "./parse.ts";

/** Where a setting belongs: a platform's name, or the part of the Worker it configures. */
export type SettingGroup = "core" | "model" | "tools" | "limits" | "relay" | "attachments" | PlatformName;

/**
 * One setting: whether it is a secret (`wrangler secret put`, `.dev.vars`) or a var
 * (`wrangler.toml [vars]`), what it means, its default (for people; the parser applies it)
 * and its parser. The README's configuration table, `.dev.vars.example` and `[vars]` are
 * checked against these entries (test/node/settings-catalog.test.ts).
 */
export interface SettingSpec<T = unknown, K extends "secret" | "var" = "secret" | "var"> {
  kind: K;
  group: SettingGroup;
  meaning: string;
  default?: string;
  /** Its value may carry keys (a URL with a key in it): problems never repeat it. */
  hideValue?: true;
  parse: Parser<T>;
}

export const spec = <T, K extends "secret" | "var">(s: SettingSpec<T, K>): SettingSpec<T, K> => s;
