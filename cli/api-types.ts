/** The JSON shapes of the Worker API that the CLI reads (see workers/db/*.ts `*Json`). */
export interface Session {
  id: string;
  title: string | null;
  source: string;
  running: boolean;
  handoff: Handoff | null;
  model: string | null;
  session_key: string | null;
  started_at: number;
  last_active_at: number;
  message_count: number;
  instructions: string | null;
  input_tokens: number;
  output_tokens: number;
  ended_at: number | null;
  end_reason: string | null;
}

export interface Handoff {
  state: "pending" | "running" | "completed" | "failed";
  platform: string;
  error: string | null;
  requested_at: number | null;
  claimed_at: number | null;
  finished_at: number | null;
  destination: { chat_id: string; thread_id: string | null } | null;
}

export interface Message {
  id: number;
  role: string;
  content: string | null;
  tool_calls: Array<{ function: { name: string } }> | null;
  tool_name: string | null;
  finish_reason: string | null;
  created_at: number;
}
