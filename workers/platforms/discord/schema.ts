import * as z from "zod";

/**
 * The parts of a Discord interaction the Worker reads, validated at the boundary. Discord
 * does not retry interactions, so a signed interaction of another shape is answered 400.
 * Unknown fields are dropped. Real deliveries are full of `null`s and the docs' examples
 * leave fields out (`application_id`, even `id` and `token`): every field that may be
 * missing accepts both, read as absent.
 */

/** An optional field that may also be `null`, read as absent. */
const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

/** Snowflakes are opaque strings (above 2^53; sanitised recordings use `DM_CHANNEL_123`). */
const snowflake = z.lazy(() => z.string().regex(/^[\w-]{1,64}$/));

export const DiscordUser = z.lazy(() =>
  z.object({
    id: snowflake,
    username: opt(z.string()),
    global_name: opt(z.string()),
    bot: opt(z.boolean()),
  }),
);

/** Command options nest (subcommands, groups): a recursive schema, depth-limited by Discord itself. */
export interface DiscordOption {
  name: string;
  type: number;
  value?: string | number | boolean | undefined;
  focused?: boolean | undefined;
  options?: DiscordOption[] | undefined;
}
export const DiscordOption: z.ZodType<DiscordOption, unknown> = z.lazy(() =>
  z.object({
    name: z.string(),
    type: z.number().int(),
    value: opt(z.union([z.string(), z.number(), z.boolean()])),
    focused: opt(z.boolean()),
    options: opt(z.array(DiscordOption)),
  }),
);

export const DiscordAttachment = z.lazy(() =>
  z.object({
    id: snowflake,
    filename: opt(z.string()),
    content_type: opt(z.string()),
    size: opt(z.number().int().nonnegative()),
    url: opt(z.string().url()),
    /** Seconds, on voice messages. */
    duration_secs: opt(z.number().nonnegative()),
  }),
);

const ResolvedMessage = z.lazy(() =>
  z.object({
    id: snowflake,
    content: opt(z.string()),
    author: opt(DiscordUser),
    attachments: opt(z.array(DiscordAttachment)),
  }),
);

export const DiscordInteraction = z.lazy(() =>
  z.object({
    id: opt(snowflake),
    type: z.number().int(),
    application_id: opt(snowflake),
    token: opt(z.string().min(1).max(1000)),
    guild_id: opt(snowflake),
    channel_id: opt(snowflake),
    channel: opt(z.object({ id: snowflake, type: z.number().int(), parent_id: opt(snowflake), name: opt(z.string()) })),
    member: opt(z.object({ user: opt(DiscordUser) })),
    user: opt(DiscordUser),
    data: opt(
      z.object({
        name: opt(z.string()),
        type: opt(z.number().int()),
        target_id: opt(snowflake),
        options: opt(z.array(DiscordOption)),
        resolved: opt(
          z.object({
            messages: opt(z.record(z.string(), ResolvedMessage)),
            attachments: opt(z.record(z.string(), DiscordAttachment)),
          }),
        ),
      }),
    ),
  }),
);

export type DiscordInteraction = z.infer<typeof DiscordInteraction>;
export type DiscordUser = z.infer<typeof DiscordUser>;
export type DiscordAttachment = z.infer<typeof DiscordAttachment>;
