import * as z from "zod";

/**
 * The parts of a Slack Events API envelope the Worker reads, validated at the boundary:
 * a signed envelope of another shape is acknowledged (2xx, one log line) and ignored,
 * since Slack retries anything else. Unknown fields are dropped; a field that may be
 * missing also accepts `null` (real deliveries carry `enterprise_id: null` and the like),
 * read as absent.
 */
const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

const SlackFile = z.lazy(() =>
  z.object({
    id: opt(z.string()),
    name: opt(z.string()),
    mimetype: opt(z.string()),
    size: opt(z.number().int().nonnegative()),
    url_private: opt(z.string().url()),
    url_private_download: opt(z.string().url()),
  }),
);

const SlackEvent = z.lazy(() =>
  z.object({
    type: z.string(),
    subtype: opt(z.string()),
    user: opt(z.string()),
    bot_id: opt(z.string()),
    text: opt(z.string()),
    ts: opt(z.string()),
    thread_ts: opt(z.string()),
    channel: opt(z.string()),
    channel_type: opt(z.string()),
    team: opt(z.string()),
    files: opt(z.array(SlackFile).max(20)),
  }),
);

export const SlackEnvelope = z.lazy(() =>
  z.object({
    type: z.string(),
    challenge: opt(z.string()),
    team_id: opt(z.string()),
    event_id: opt(z.string().max(200)),
    event: opt(SlackEvent),
    authorizations: opt(z.array(z.object({ user_id: opt(z.string()), is_bot: opt(z.boolean()) }))),
  }),
);

export type SlackEnvelope = z.infer<typeof SlackEnvelope>;
export type SlackEvent = z.infer<typeof SlackEvent>;
