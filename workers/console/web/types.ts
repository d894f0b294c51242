/** The JSON shapes of the Worker API the console reads (workers/db/json.ts `*Json`, workers/http/*.ts). */

export type HandoffState = "pending" | "running" | "completed" | "failed";

export interface Handoff {
  state: HandoffState;
  platform: string;
  /** The platform of the chat it was asked for in (`/handoff` there); null: the CLI, console or API. */
  from?: string | null;
  error: string | null;
  requested_at: number | null;
  claimed_at: number | null;
  finished_at: number | null;
  destination: { chat_id: string; thread_id: string | null; url?: string | null } | null;
}

export interface Session {
  id: string;
  title: string | null;
  source: string;
  running: boolean;
  instructions: string | null;
  handoff: Handoff | null;
  model: string | null;
  chat_type: string | null;
  started_at: number;
  last_active_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number;
  input_tokens: number;
  output_tokens: number;
}

export interface ToolCall {
  id: string;
  function: { name: string; arguments: string };
}

/** A file a message carried, when the API lists one (`name`, `mime`, `url` on this origin). */
export interface Attachment {
  name?: string | null;
  mime?: string | null;
  size?: number | null;
  url?: string | null;
}

export interface Message {
  id: number;
  role: string;
  content: string | null;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  tool_name: string | null;
  finish_reason: string | null;
  /** Why the platform did not deliver this reply (it reported the message failed after taking it). */
  undelivered?: string;
  created_at: number;
  attachments?: Attachment[] | null;
}

export interface Transcript {
  messages: Message[];
  /** Messages through `folded_through` are no longer sent to the model; `text` stands for them (null: trimmed, no summary). */
  summary: { text: string | null; folded_through: number } | null;
}

export interface Platform {
  name: string;
  enabled: boolean;
  relay: boolean;
  /** Only a gateway can reach it (Signal): no webhook, no tunnel; its gateway dials out. */
  bridged?: boolean;
  /** The gateway that bridges it (Signal: its turns run here, its messages come through that gateway), or null. */
  bridge?: string | null;
  home_channel: { chat_id: string; thread_id: string | null; source: string; handoff_to?: string; refused?: string | null } | null;
  missing?: string[];
  /** The missing settings with how each is declared (a secret, or a `[vars]` entry). */
  missing_settings?: Array<{ name: string; kind: "secret" | "var" }>;
  /** The platform's `*_ALLOWED_USERS`, and whether it is set (unset: nobody may talk). */
  allowed_users?: { setting: string; set: boolean };
  setup?: string | null;
  /** Discord's Gateway with DISCORD_GATEWAY=on (times in epoch ms); absent or null: none. */
  connection?: {
    state: "connected" | "connecting" | "stopped";
    connected_since: number | null;
    last_ack_at: number | null;
    latency_ms: number | null;
    resumes: number;
    last_close_code: number | null;
    problem: { problem: string; fix: string } | null;
  } | null;
}

/** Where the Worker answering the console runs, as it sees it. */
export interface WorkerPlace {
  origin: string;
  /** Reached on a loopback host: `npm start` / `npm run dev`. */
  local: boolean;
}

/** A setting whose value the Worker did not understand (`setting_problems` of `/v1/platforms`); `value` is null for secrets. */
export interface SettingProblem {
  setting: string;
  value: string | null;
  message: string;
}

export interface Gateway {
  id: string;
  connected: boolean;
  platforms?: string[];
  buffered?: number;
  dropped?: number;
  /** Actions for a bridged platform waiting for this gateway. */
  actionsWaiting?: number;
}

export interface UsageRow {
  key: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  /** Per session only: its title (null: untitled or deleted). */
  title?: string | null;
}

/** An account of a person (`GET /v1/people`). */
export interface PersonAccount {
  platform: string;
  user_id: string;
  linked_at: number;
  allowed: boolean;
  admin: boolean;
}

/** Accounts linked into one person with /link. */
export interface Person {
  id: string;
  accounts: PersonAccount[];
}
