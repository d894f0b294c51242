import * as z from "zod";

/**
 * signal-cli's receive output (PLATFORM-NOTES "Signal"; sc `json/JsonMessageEnvelope.java`,
 * `JsonDataMessage.java`): only the fields parsing reads, loose everywhere (any field may be
 * null or absent across versions), unknown fields stripped.
 */
const s = z.lazy(() => z.string().nullish());
const n = z.lazy(() => z.number().nullish());

export const SignalMention = z.lazy(() => z.object({ name: s, number: s, uuid: s, start: z.number(), length: z.number() }));
export type SignalMention = z.infer<typeof SignalMention>;

export const SignalAttachment = z.lazy(() =>
  z.object({
    contentType: s,
    filename: s,
    id: s,
    size: n,
    /** Some versions flag voice notes. */
    voiceNote: z.boolean().nullish(),
  }),
);
export type SignalAttachment = z.infer<typeof SignalAttachment>;

export const SignalDataMessage = z.lazy(() =>
  z.object({
    timestamp: n,
    message: s,
    groupInfo: z.object({ groupId: s, type: s }).nullish(),
    mentions: z.array(SignalMention).nullish(),
    attachments: z.array(SignalAttachment).nullish(),
    quote: z.object({ id: n, author: s, authorNumber: s, authorUuid: s }).nullish(),
    reaction: z.unknown().nullish(),
    remoteDelete: z.unknown().nullish(),
    sticker: z.unknown().nullish(),
    isExpirationUpdate: z.boolean().nullish(),
  }),
);
export type SignalDataMessage = z.infer<typeof SignalDataMessage>;

export const SignalEnvelope = z.lazy(() =>
  z.object({
    source: s,
    sourceNumber: s,
    sourceUuid: s,
    sourceName: s,
    sourceDevice: n,
    timestamp: n,
    dataMessage: SignalDataMessage.nullish(),
    editMessage: z.unknown().nullish(),
    storyMessage: z.unknown().nullish(),
    syncMessage: z.unknown().nullish(),
    callMessage: z.unknown().nullish(),
    receiptMessage: z.unknown().nullish(),
    typingMessage: z.unknown().nullish(),
  }),
);
export type SignalEnvelope = z.infer<typeof SignalEnvelope>;

const Failure = z.lazy(() => z.object({ message: s, type: s }).passthrough());

/** A receive's params object: the SSE `data:` line, or the `params` of a JSON-RPC notification. */
const Params = z.lazy(() =>
  z.object({
    envelope: SignalEnvelope.nullish(),
    account: s,
    subscription: n,
    /** signal-cli ≥ 0.12.0 explicit subscriptions nest the envelope here. */
    result: z.object({ envelope: SignalEnvelope.nullish(), account: s, exception: Failure.nullish(), error: Failure.nullish() }).nullish(),
    /** A message that could not be decrypted (`error` before 0.10.4). */
    exception: Failure.nullish(),
    error: Failure.nullish(),
  }),
);

/**
 * One received item in any of the four shapes signal-cli has produced: a JSON-RPC
 * `receive` notification (params with the envelope, with `result` nesting it, or with
 * `subscription` beside it), or the bare params object of an SSE event.
 */
export const SignalReceived = z.lazy(() => z.union([z.object({ jsonrpc: z.string(), method: z.string(), params: Params }), Params]));
export type SignalReceived = z.infer<typeof SignalReceived>;

/**
 * What a bridging gateway sends up for one received item: what signal-cli produced, as it
 * came, the R2 keys the gateway uploaded its files to (by signal-cli attachment id), and the
 * bot's own UUID where the gateway knows it (mentions may name only the UUID).
 */
export const SignalBridged = z.lazy(() =>
  z.object({
    received: z.unknown(),
    files: z.record(z.string(), z.string()).optional(),
    self: z.object({ number: s, uuid: s }).optional(),
  }),
);
