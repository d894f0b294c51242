import type { ModelConfig } from "./agent/index.ts";

export { PLATFORMS, isPlatformName, type PlatformName } from "./platforms/names.ts";

/** What to do with a platform message that arrives while its session runs a turn. */
export type BusyPolicy = "queue" | "interrupt";

/** A trimmed setting; empty or missing means unset. */
export function setting(v: string | undefined | null): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}

/** A comma list; empty entries dropped. */
export function list(v: string | undefined | null): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Who may run turns: nobody (unset), everyone (`*`), or listed ids. */
export type AllowList = { kind: "none" } | { kind: "all" } | { kind: "some"; ids: ReadonlySet<string> };

export function allowList(v: string | undefined): AllowList {
  const ids = list(v);
  if (ids.length === 0) return { kind: "none" };
  if (ids.includes("*")) return { kind: "all" };
  return { kind: "some", ids: new Set(ids) };
}

export function isAllowed(list: AllowList, userId: string): boolean {
  return list.kind === "all" || (list.kind === "some" && list.ids.has(userId));
}

/** The model the Worker runs: `LLM_*` (and the `AI` binding for workers-ai), or the offline model. */
export function modelConfig(env: Env): ModelConfig {
  const delay = setting(env.OFFLINE_STREAM_DELAY_MS);
  return {
    provider: setting(env.LLM_PROVIDER),
    ai: env.AI,
    baseUrl: setting(env.LLM_BASE_URL),
    apiKey: setting(env.LLM_API_KEY),
    model: setting(env.LLM_MODEL),
    offlineDelayMs: delay !== undefined && Number.isFinite(Number(delay)) ? Math.max(0, Number(delay)) : undefined,
  };
}

export function busyPolicy(env: Env): BusyPolicy {
  return setting(env.BUSY_POLICY) === "interrupt" ? "interrupt" : "queue";
}
