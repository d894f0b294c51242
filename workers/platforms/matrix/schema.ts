import * as z from "zod";

/**
 * The parts of an application-service transaction the Worker reads (spec
 * `data/api/application-service/transactions.yaml`). Homeservers and clients add fields
 * freely: unknown ones are dropped; a field of an unexpected type reads as absent (`lax`), so
 * one odd event never loses the others. Each event is checked on its own.
 */
const lax = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);
const short = (max: number) => z.string().max(max);

/** A transaction: its events (each checked alone) and the ephemeral sections, which are never read. */
export const MatrixTransaction = z.lazy(() =>
  z.object({
    events: z.array(z.unknown()).max(10_000).nullish(),
    ephemeral: z.unknown().optional(),
    "de.sorunome.msc2409.ephemeral": z.unknown().optional(),
  }),
);

/** A client event as pushed to the application service. `content` is null in some redacted events. */
export const MatrixEvent = z.lazy(() =>
  z.object({
    type: short(255),
    event_id: lax(short(512)),
    room_id: lax(short(512)),
    sender: lax(short(512)),
    state_key: lax(short(512)),
    content: z.unknown().optional(),
  }),
);

const Relation = z.lazy(() =>
  z.object({
    rel_type: lax(short(255)),
    event_id: lax(short(512)),
    is_falling_back: lax(z.boolean()),
    "m.in_reply_to": lax(z.object({ event_id: lax(short(512)) })),
  }),
);

/** An `m.room.message`'s content (any msgtype), the fields parsing reads. */
export const MessageContent = z.lazy(() =>
  z.object({
    msgtype: lax(short(255)),
    body: lax(short(262_144)),
    format: lax(short(255)),
    formatted_body: lax(short(524_288)),
    filename: lax(short(1024)),
    url: lax(short(2048)),
    /** An encrypted attachment (`EncryptedFile`): its key is not ours to read. */
    file: z.unknown().optional(),
    info: lax(z.object({ mimetype: lax(short(255)), size: lax(z.number().int().nonnegative()), duration: lax(z.number().nonnegative()) })),
    geo_uri: lax(short(2048)),
    "m.relates_to": lax(Relation),
    "m.mentions": lax(z.object({ user_ids: lax(z.array(short(512)).max(1000)), room: lax(z.boolean()) })),
    "org.matrix.msc3245.voice": z.unknown().optional(),
  }),
);

/** An `m.room.member` event's content. */
export const MemberContent = z.lazy(() => z.object({ membership: lax(short(64)), is_direct: lax(z.boolean()) }));

export type MatrixEvent = z.infer<typeof MatrixEvent>;
export type MessageContent = z.infer<typeof MessageContent>;
