import * as z from "zod";

/**
 * The parts of a Cloud API webhook the Worker reads, validated at the boundary. Meta adds
 * fields and types freely: unknown fields are dropped, a message of an unknown type keeps
 * its `type` (and is answered with a short note), and a missing field (Meta leaves `from`,
 * `contacts` and the like out of system messages and statuses) reads as absent.
 */
const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v): z.output<T> | undefined => v ?? undefined);

const short = (max: number) => z.string().max(max);

const Media = z.lazy(() =>
  z.object({
    id: short(128),
    mime_type: opt(short(200)),
    caption: opt(short(4096)),
    filename: opt(short(1024)),
    voice: opt(z.boolean()),
    animated: opt(z.boolean()),
    file_size: opt(z.number().int().nonnegative()),
  }),
);

const Contact = z.lazy(() =>
  z.object({
    name: opt(z.object({ formatted_name: opt(short(500)), first_name: opt(short(200)), last_name: opt(short(200)) })),
    phones: opt(z.array(z.object({ phone: opt(short(100)), type: opt(short(50)), wa_id: opt(short(32)) })).max(20)),
    emails: opt(z.array(z.object({ email: opt(short(320)) })).max(20)),
    org: opt(z.object({ company: opt(short(500)) })),
  }),
);

const Message = z.lazy(() =>
  z.object({
    id: short(256),
    from: opt(short(64)),
    timestamp: opt(short(20)),
    type: short(64),
    group_id: opt(short(128)),
    context: opt(z.object({ id: opt(short(256)), from: opt(short(64)), forwarded: opt(z.boolean()), frequently_forwarded: opt(z.boolean()) })),
    text: opt(z.object({ body: short(65_536) })),
    image: opt(Media),
    document: opt(Media),
    audio: opt(Media),
    video: opt(Media),
    sticker: opt(Media),
    location: opt(z.object({ latitude: z.number(), longitude: z.number(), name: opt(short(1000)), address: opt(short(1000)), url: opt(short(2000)) })),
    contacts: opt(z.array(Contact).max(20)),
    interactive: opt(
      z.object({
        type: short(64),
        button_reply: opt(z.object({ id: opt(short(256)), title: short(1000) })),
        list_reply: opt(z.object({ id: opt(short(256)), title: short(1000), description: opt(short(1000)) })),
      }),
    ),
    button: opt(z.object({ text: opt(short(1000)), payload: opt(short(1000)) })),
    unsupported: opt(z.object({ type: opt(short(64)) })),
  }),
);

const Status = z.lazy(() =>
  z.object({
    id: short(256),
    status: short(32),
    recipient_id: opt(short(64)),
    timestamp: opt(short(20)),
    errors: opt(z.array(z.object({ code: opt(z.number()), title: opt(short(500)), message: opt(short(1000)) })).max(10)),
  }),
);

const Value = z.lazy(() =>
  z.object({
    messaging_product: opt(short(32)),
    metadata: opt(z.object({ phone_number_id: opt(short(64)), display_phone_number: opt(short(64)) })),
    contacts: opt(z.array(z.object({ wa_id: opt(short(64)), profile: opt(z.object({ name: opt(short(500)) })) })).max(1000)),
    // Each message and status is checked alone: one odd update never loses the others.
    messages: opt(z.array(z.unknown()).max(1000)),
    statuses: opt(z.array(z.unknown()).max(1000)),
  }),
);

/** A webhook delivery: up to 1000 updates, batched in entries and their changes. */
export const WhatsAppEnvelope = z.lazy(() =>
  z.object({
    object: short(64),
    entry: z.array(z.object({ id: opt(short(64)), changes: z.array(z.object({ field: short(64), value: z.unknown() })).max(1000) })).max(1000),
  }),
);

export { Message as WhatsAppMessage, Status as WhatsAppStatus, Value as WhatsAppValue };
export type WhatsAppEnvelope = z.infer<typeof WhatsAppEnvelope>;
export type WhatsAppValue = z.infer<typeof Value>;
export type WhatsAppMessage = z.infer<typeof Message>;
export type WhatsAppStatus = z.infer<typeof Status>;
export type WhatsAppMedia = z.infer<typeof Media>;
