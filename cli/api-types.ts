/**
 * The JSON the Worker's API answers with, as the CLI reads it: the Worker's own types
 * (workers/db/json.ts builds every session, handoff and message body), imported as types
 * only, so the CLI and the Worker cannot drift apart and no Worker code is bundled.
 */
import type { HandoffJson, MessageJson, SessionJson } from "../workers/db/json.ts";

export type Session = SessionJson;
export type Handoff = NonNullable<HandoffJson>;
export type Message = MessageJson;
