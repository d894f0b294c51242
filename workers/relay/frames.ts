import * as z from "zod";
import { PLATFORMS } from "../platforms/names.ts";
import type { PlatformEvent, ReplyTarget } from "../platforms/types.ts";
import { BRIDGE_CONNECTOR_TYPES, BRIDGE_GATEWAY_TYPES, bridgeConnectorFrames, bridgeGatewayFrames } from "./bridge.ts";

/**
 * Relay frames (SPEC section 6, docs/relay-connector-contract.md): JSON objects, one per
 * line (`\n`). Several frames may share a WebSocket message and one frame may span
 * several; malformed lines are skipped and unknown types ignored. One schema per frame,
 * used by the connector (the Relay object), the gateway and the tests.
 */

/** Largest frame either side accepts; a longer line closes the socket with 1009. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** WebSocket close codes of the relay. */
export const CLOSE = {
  /** Bad, unknown, revoked, replayed or (reason "expired") expired credentials. */
  unauthorized: 4401,
  /** Reason `replaced`: a newer socket of the gateway took over (the old one went silent); `busy`: a newcomer refused while the current socket is live. */
  replaced: 4409,
  /** A frame over MAX_FRAME_BYTES. */
  tooBig: 1009,
} as const;

const id = z.lazy(() => z.union([z.string(), z.number()]).transform(String));
const optText = z.lazy(() =>
  z
    .string()
    .nullish()
    .transform((v) => v ?? null),
);

/** Where a platform message came from, as the gateway sees it. */
export const WireSource = z.lazy(() =>
  z.object({
    platform: z.string(),
    chat_id: id,
    chat_type: z.string(),
    user_id: id,
    user_name: optText,
    user_handle: optText.optional(),
    thread_id: z
      .union([z.string(), z.number()])
      .nullish()
      .transform((v) => (v === null || v === undefined ? null : String(v))),
    /** Slack workspace id. */
    scope_id: optText.optional(),
  }),
);
export type WireSource = z.infer<typeof WireSource>;

/** What one attachment of an inbound message is (the contract's `media`, in the order of `media_urls`). */
export const WireMedia = z.lazy(() =>
  z.object({
    kind: z.enum(["image", "audio", "voice", "video", "document"]),
    mime: optText,
    size: z
      .number()
      .nullish()
      .transform((v) => v ?? null),
    filename: optText,
    /** Seconds, for voice notes, audio and video. */
    seconds: z
      .number()
      .nullish()
      .transform((v) => v ?? null),
    /** Why the connector could not fetch it (its `media_urls` entry is then ""). */
    error: optText.optional(),
  }),
);
export type WireMedia = z.infer<typeof WireMedia>;

export const InboundEvent = z.lazy(() =>
  z.object({
    text: z.string(),
    message_id: id,
    source: WireSource,
    session_key: z.string().min(1),
    /** Where replies go (opaque: hand it back in `outbound.action.target`). */
    target: z.string().optional(),
    /** Links to the message's attachments, fetched by the connector and signed for this gateway (short-lived). */
    media_urls: z.array(z.string()).max(20).optional(),
    media: z.array(WireMedia).max(20).optional(),
    /** The first attachment's kind, or `text`. */
    message_type: z.string().optional(),
  }),
);
export type InboundEvent = z.infer<typeof InboundEvent>;
export type InboundEventIn = z.input<typeof InboundEvent>;

/** Capabilities of one fronted platform, answering its hello. */
export const Descriptor = z.lazy(() =>
  z.object({
    contract_version: z.literal(1),
    platform: z.string(),
    label: z.string(),
    max_message_length: z.number().int().positive(),
    /** How max_message_length counts: UTF-16 code units or code points ("chars"). */
    len_unit: z.enum(["utf16", "chars"]),
    supports_edit: z.boolean(),
    supports_threads: z.boolean(),
    supports_draft_streaming: z.boolean(),
    /** `commonmark`: send Markdown; the connector renders it natively (and splits it at the limit). */
    markdown_dialect: z.string(),
    supported_ops: z.array(z.string()),
    /** Least ms between two edits of a streamed reply (private chats, groups). */
    edit_interval_ms: z.object({ private: z.number(), group: z.number() }).optional(),
    /** The Worker's `DAILY_TOKEN_BUDGET` (tokens per platform user per UTC day; absent or null: none), for the gateway to keep. */
    daily_token_budget: z.number().int().positive().nullable().optional(),
    /** An extension: the gateway bridges this platform (sends what it receives up, runs the edge's actions); the edge runs its turns. */
    bridged: z.boolean().optional(),
  }),
);
export type Descriptor = z.infer<typeof Descriptor>;

export const OutboundAction = z.lazy(() =>
  z.object({
    op: z.string(),
    chat_id: id,
    content: z.string().optional(),
    message_id: id.optional(),
    /** Messages already showing a reply (an edit of a reply that grew past one message). */
    message_ids: z.array(id).optional(),
    thread_id: optText.optional(),
    reply_to: optText.optional(),
    thread_name: z.string().optional(),
    /** The `target` of the inbound frame being answered. */
    target: z.string().optional(),
    /** `final`: the reply is complete (all of it is shown, in several messages if long). */
    final: z.boolean().optional(),
    /**
     * An extension, for `send`: the same key (a reply's first message, named by its turn) sent
     * again is not posted again. The connector returns the messages it posted then, edited
     * to this content where it differs; so a gateway that restarted without the first result
     * does not show the reply twice.
     */
    idempotency_key: z.string().min(1).max(200).optional(),
    /** Hermes gateways put a reply's thread here. */
    metadata: z
      .object({ thread_id: z.union([z.string(), z.number()]).nullish() })
      .passthrough()
      .optional(),
  }),
);
export type OutboundAction = z.infer<typeof OutboundAction>;
export type OutboundActionIn = z.input<typeof OutboundAction>;

/** The messages a result names, first to last (`message_ids`, else the one `message_id`). */
export function resultIds(result: { message_id?: string | undefined; message_ids?: string[] | undefined }): string[] {
  return result.message_ids ?? (result.message_id ? [result.message_id] : []);
}

export const OutboundResult = z.lazy(() =>
  z.object({
    success: z.boolean(),
    message_id: z.string().optional(),
    /** Every message now showing the reply, first to last. */
    message_ids: z.array(z.string()).optional(),
    /** The whole content shows (false for a streaming update of a reply longer than one message). */
    complete: z.boolean().optional(),
    thread_id: z.string().optional(),
    /** thread_create: where messages of the new thread go (on Discord, the thread itself). */
    chat_id: z.string().optional(),
    error: z.string().optional(),
    code: z.string().optional(),
    /** Seconds the platform asked to wait (a 429). */
    retry_after: z.number().optional(),
  }),
);
export type OutboundResult = z.infer<typeof OutboundResult>;

/** Gateway → connector. */
export const GatewayFrame = z.lazy(() =>
  z.discriminatedUnion("type", [
    z.object({ type: z.literal("hello"), platform: z.string(), botId: z.union([z.string(), z.number()]).optional() }),
    z.object({ type: z.literal("inbound_ack"), bufferId: z.string() }),
    z.object({ type: z.literal("interrupt"), session_key: z.string(), reason: z.string().optional() }),
    z.object({ type: z.literal("outbound"), requestId: id, action: OutboundAction, platform: z.string().optional() }),
    z.object({ type: z.literal("going_idle") }),
    z.object({ type: z.literal("ping") }),
    ...bridgeGatewayFrames(),
  ]),
);
export type GatewayFrame = z.infer<typeof GatewayFrame>;

/** Connector → gateway. */
export const ConnectorFrame = z.lazy(() =>
  z.discriminatedUnion("type", [
    z.object({ type: z.literal("descriptor"), descriptor: Descriptor }),
    z.object({ type: z.literal("inbound"), event: InboundEvent, bufferId: z.string() }),
    z.object({ type: z.literal("interrupt_inbound"), session_key: z.string(), chat_id: id }),
    z.object({ type: z.literal("outbound_result"), requestId: z.string(), result: OutboundResult }),
    z.object({ type: z.literal("going_idle_ack") }),
    z.object({ type: z.literal("error"), code: z.string(), message: z.string() }),
    z.object({ type: z.literal("pong") }),
    ...bridgeConnectorFrames(),
  ]),
);
export type ConnectorFrame = z.infer<typeof ConnectorFrame>;

/** A frame as sent (input shapes: ids may be numbers, optional fields absent). */
export type GatewayFrameIn = z.input<typeof GatewayFrame>;
export type ConnectorFrameIn = z.input<typeof ConnectorFrame>;

export function encodeFrame(frame: GatewayFrameIn | ConnectorFrameIn): string {
  return `${JSON.stringify(frame)}\n`;
}

/** What one decoded object is: a known frame, a frame of an unknown type (ignored), or malformed. */
export type Checked<F> = { kind: "frame"; frame: F } | { kind: "unknown"; type: string } | { kind: "malformed"; type: string; why: string };

function check<S extends typeof GatewayFrame | typeof ConnectorFrame>(
  schema: S,
  known: readonly string[],
  obj: Record<string, unknown> & { type: string },
): Checked<z.infer<S>> {
  if (!known.includes(obj.type)) return { kind: "unknown", type: obj.type };
  const parsed = schema.safeParse(obj);
  if (parsed.success) return { kind: "frame", frame: parsed.data as z.infer<S> };
  const issue = parsed.error.issues[0];
  return { kind: "malformed", type: obj.type, why: `${issue?.path.join(".") || "frame"}: ${issue?.code ?? "invalid"}` };
}

const GATEWAY_TYPES = ["hello", "inbound_ack", "interrupt", "outbound", "going_idle", "ping", ...BRIDGE_GATEWAY_TYPES];
const CONNECTOR_TYPES = ["descriptor", "inbound", "interrupt_inbound", "outbound_result", "going_idle_ack", "error", "pong", ...BRIDGE_CONNECTOR_TYPES];

export const checkGatewayFrame = (obj: Record<string, unknown> & { type: string }) => check(GatewayFrame, GATEWAY_TYPES, obj);
export const checkConnectorFrame = (obj: Record<string, unknown> & { type: string }) => check(ConnectorFrame, CONNECTOR_TYPES, obj);

/** What a chunk of text yielded. */
export interface Decoded {
  frames: Array<Record<string, unknown> & { type: string }>;
  /** Lines that were not JSON objects with a string `type` (skipped). */
  skipped: number;
  /** A line grew past MAX_FRAME_BYTES: the caller closes with 1009. */
  tooBig: boolean;
}

/** Splits text into JSON objects with a `type`, keeping a partial last line for the next chunk. */
export class FrameDecoder {
  partial: string;

  constructor(partial = "") {
    this.partial = partial;
  }

  push(text: string): Decoded {
    const all = this.partial + text;
    const lines = all.split("\n");
    this.partial = lines.pop() ?? "";
    const out: Decoded = { frames: [], skipped: 0, tooBig: this.partial.length > MAX_FRAME_BYTES };
    for (const line of lines) {
      if (line.length > MAX_FRAME_BYTES) {
        out.tooBig = true;
        continue;
      }
      if (line.trim() === "") continue;
      try {
        const v = JSON.parse(line) as unknown;
        if (typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { type?: unknown }).type === "string") {
          out.frames.push(v as Record<string, unknown> & { type: string });
        } else out.skipped++;
      } catch {
        out.skipped++;
      }
    }
    return out;
  }
}

/**
 * The `inbound` event of a platform event, as the gateway receives it. `chatType` is the
 * contract's word for the chat where the adapter has its own (`forum`), and the user's
 * display name and handle go as `user_name` and `user_handle`.
 */
export function inboundFrameEvent(
  event: PlatformEvent,
  sessionKey: string,
  where: { chatId: string; threadId: string | null; chatType?: string | undefined },
): InboundEventIn {
  const { source } = event;
  const text = event.kind === "message" ? event.text : event.kind === "command" ? `/${event.name}${event.args ? ` ${event.args}` : ""}` : `/${event.name}`;
  return {
    text,
    message_id: event.messageId,
    session_key: sessionKey,
    target: JSON.stringify(event.target),
    source: {
      platform: source.platform,
      chat_id: where.chatId || source.chatId,
      chat_type: where.chatType ?? source.chatType,
      user_id: source.userId,
      user_name: source.userName ?? null,
      ...(source.userHandle ? { user_handle: source.userHandle } : {}),
      thread_id: source.threadId ?? null,
      ...(source.scopeId ? { scope_id: source.scopeId } : {}),
    },
  };
}

/** The opaque `target` of a frame: the reply target as JSON, unchanged since the first gateways (they hand back what they got). */
const WireTarget = z.lazy(() => z.strictObject({ platform: z.enum(PLATFORMS), private: z.boolean(), ref: z.string().max(4096) }));

/**
 * The reply target a gateway handed back, if it has the shape this connector makes; its
 * `ref` is then checked by the platform adapter's codec before any use.
 */
export function targetFromWire(v: string | undefined): ReplyTarget | null {
  if (!v || v.length > 8192) return null;
  try {
    const t = WireTarget.safeParse(JSON.parse(v));
    return t.success ? t.data : null;
  } catch {
    return null;
  }
}
