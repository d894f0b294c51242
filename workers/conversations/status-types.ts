import type { ModelProbe } from "../agent/probe.ts";
import type { ConnectionStatus } from "../platforms/connection.ts";
import type { PlatformName } from "../platforms/names.ts";

/**
 * The JSON of `GET /v1/status`, in a file of its own with no runtime imports: the CLI reads
 * it as these types.
 */

/** A setting whose value was not understood; `value` is null for secrets (never shown). */
export interface SettingProblemJson {
  setting: string;
  value: string | null;
  message: string;
}

/** A problem, and which part of the setup it is in. */
export interface StatusProblem {
  area: string;
  problem: string;
  fix: string;
}

export interface PlatformStatus {
  name: PlatformName;
  enabled: boolean;
  /** Settings it still needs to be enabled. */
  missing: string[];
  /** The relay gateway serving it, or null (the edge does). */
  relay: string | null;
  home_channel: { chat_id: string; thread_id: string | null; source: string } | null;
  /** What the platform itself reported (null when it is not enabled). */
  detail: string | null;
  /** The connection its messages come over, where the Worker holds one (Discord's Gateway with DISCORD_GATEWAY=on); else null. */
  connection?: ConnectionStatus | null;
}

/** `GET /v1/status`: everything `hermes-edge status` shows, each problem with its fix. */
export interface WorkerStatus {
  version: string;
  model: Omit<ModelProbe, "problem">;
  platforms: PlatformStatus[];
  gateways: Array<{ id: string; connected: boolean; platforms: string[]; buffered: number; dropped: number }>;
  migrations: { expected: number; applied: number; missing: string[] };
  cron: { last_run: number | null };
  /** Settings whose values were not understood (each is also one of `problems`, area `settings`). */
  setting_problems: SettingProblemJson[];
  problems: StatusProblem[];
}
