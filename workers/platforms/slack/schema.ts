import { z } from "zod";

/**
 * The parts of a Slack Events API envelope the Worker reads, validated at the boundary:
 * a signed envelope of another shape is acknowledged (2xx, one log line) and ignored,
 * since Slack retries anything else. Unknown fields are dropped.
 */
const SlackFile = z.object({
  id: z.string().optional(),
  name: z.string().optional(),
  mimetype: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
  url_private: z.string().url().optional(),
  url_private_download: z.string().url().optional(),
});

const SlackEvent = z.object({
  type: z.string(),
  subtype: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().optional(),
  thread_ts: z.string().optional(),
  channel: z.string().optional(),
  channel_type: z.string().optional(),
  team: z.string().optional(),
  files: z.array(SlackFile).optional(),
});

export const SlackEnvelope = z.object({
  type: z.string(),
  challenge: z.string().optional(),
  team_id: z.string().optional(),
  event_id: z.string().max(200).optional(),
  event: SlackEvent.optional(),
  authorizations: z.array(z.object({ user_id: z.string().optional(), is_bot: z.boolean().optional() })).optional(),
});

export type SlackEnvelope = z.infer<typeof SlackEnvelope>;
export type SlackEvent = z.infer<typeof SlackEvent>;
