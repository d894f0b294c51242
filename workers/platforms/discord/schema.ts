import { z } from "zod";

/**
 * The parts of a Discord interaction the Worker reads, validated at the boundary. Discord
 * does not retry interactions, so a signed interaction of another shape is answered 400.
 * Unknown fields are dropped.
 */
const snowflake = z.string().regex(/^\d{1,25}$/);

export const DiscordUser = z.object({
  id: snowflake,
  username: z.string().optional(),
  global_name: z.string().nullable().optional(),
  bot: z.boolean().optional(),
});

/** Command options nest (subcommands, groups): a recursive schema, depth-limited by Discord itself. */
export interface DiscordOption {
  name: string;
  type: number;
  value?: string | number | boolean | undefined;
  focused?: boolean | undefined;
  options?: DiscordOption[] | undefined;
}
export const DiscordOption: z.ZodType<DiscordOption> = z.lazy(() =>
  z.object({
    name: z.string(),
    type: z.number().int(),
    value: z.union([z.string(), z.number(), z.boolean()]).optional(),
    focused: z.boolean().optional(),
    options: z.array(DiscordOption).optional(),
  }),
);

const DiscordAttachment = z.object({
  id: snowflake,
  filename: z.string().optional(),
  content_type: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
  url: z.string().url().optional(),
});

const ResolvedMessage = z.object({
  id: snowflake,
  content: z.string().optional(),
  author: DiscordUser.optional(),
  attachments: z.array(DiscordAttachment).optional(),
});

export const DiscordInteraction = z.object({
  id: snowflake,
  type: z.number().int(),
  application_id: snowflake,
  token: z.string().min(1).max(1000),
  guild_id: snowflake.optional(),
  channel_id: snowflake.optional(),
  channel: z.object({ id: snowflake, type: z.number().int(), parent_id: snowflake.nullable().optional(), name: z.string().optional() }).optional(),
  member: z.object({ user: DiscordUser.optional() }).optional(),
  user: DiscordUser.optional(),
  data: z
    .object({
      id: z.string().optional(),
      name: z.string().optional(),
      type: z.number().int().optional(),
      target_id: snowflake.optional(),
      options: z.array(DiscordOption).optional(),
      resolved: z
        .object({
          messages: z.record(z.string(), ResolvedMessage).optional(),
          attachments: z.record(z.string(), DiscordAttachment).optional(),
        })
        .optional(),
    })
    .optional(),
});

export type DiscordInteraction = z.infer<typeof DiscordInteraction>;
export type DiscordUser = z.infer<typeof DiscordUser>;
export type DiscordAttachment = z.infer<typeof DiscordAttachment>;
