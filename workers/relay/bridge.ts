import * as z from "zod";

/**
 * The bridge extension of the relay contract (docs/relay-connector-contract.md, "Bridged
 * platforms"): a gateway that can reach a platform the Worker cannot (Signal, through
 * signal-cli on the user's machine) sends what it receives up its socket, and the edge runs
 * the turns and sends back the actions to take. One schema per frame, used by the Relay
 * object and by `hermes-edge gateway`.
 */

/** The largest number of actions one enqueue may carry (a reply of many parts, a receipt, typing). */
export const MAX_ACTIONS_PER_ENQUEUE = 64;

const recipients = z.lazy(() => z.array(z.string().min(1).max(64)).min(1).max(16));
const groupId = z.lazy(() => z.string().min(1).max(128));

/** signal-cli `send`: a person (`recipient`) or a group; text, styles, a quote, an edit. */
export const SignalSendParams = z.lazy(() =>
  z
    .object({
      recipient: recipients.optional(),
      groupId: groupId.optional(),
      message: z.string().max(64 * 1024),
      textStyle: z
        .array(z.string().regex(/^\d+:\d+:[A-Z]+$/))
        .max(1000)
        .optional(),
      quoteTimestamp: z.number().int().positive().optional(),
      quoteAuthor: z.string().max(64).optional(),
      editTimestamp: z.number().int().positive().optional(),
    })
    .strict()
    .refine((p) => (p.recipient === undefined) !== (p.groupId === undefined), "a recipient or a groupId"),
);

/** One signal-cli JSON-RPC call the gateway may be asked to make: these three, nothing else. */
export const SignalCall = z.lazy(() =>
  z.discriminatedUnion("method", [
    z.object({ method: z.literal("send"), params: SignalSendParams }),
    z.object({
      method: z.literal("sendTyping"),
      params: z
        .object({ recipient: recipients.optional(), groupId: groupId.optional(), stop: z.boolean().optional() })
        .strict()
        .refine((p) => (p.recipient === undefined) !== (p.groupId === undefined), "a recipient or a groupId"),
    }),
    z.object({
      method: z.literal("sendReceipt"),
      params: z
        .object({
          recipient: z.string().min(1).max(64),
          targetTimestamps: z.array(z.number().int().positive()).min(1).max(100),
          type: z.enum(["read", "viewed"]),
        })
        .strict(),
    }),
  ]),
);
export type SignalCall = z.infer<typeof SignalCall>;

/** An action as the edge's adapter queues it in the Relay object (see workers/platforms/signal/bridge.ts). */
export const BridgeActionIn = z.lazy(() =>
  z.object({
    call: SignalCall,
    ref: z.string().max(64).optional(),
    editOf: z.string().max(64).optional(),
    live: z.boolean().optional(),
    transient: z.boolean().optional(),
  }),
);
export type BridgeActionIn = z.infer<typeof BridgeActionIn>;

/** What signal-cli answered: the sent message's timestamp, or why it failed. */
export const BridgeResult = z.lazy(() =>
  z.object({
    success: z.boolean(),
    /** `send`: the timestamp of the message (or of the edit) made: the id edits and quotes name. */
    timestamp: z.number().int().optional(),
    code: z.string().max(64).optional(),
    error: z.string().max(2000).optional(),
    /** Seconds signal-cli asked to wait (`retryAfterSeconds`, a rate limit). */
    retry_after: z.number().optional(),
  }),
);
export type BridgeResult = z.infer<typeof BridgeResult>;

/** Gateway → connector frames of the bridge (made when the relay frames' schemas are, on first use). */
export const bridgeGatewayFrames = () =>
  [
    /** One received item (`body`: the JSON the platform produced, as the gateway wraps it); acked once stored. */
    z.object({ type: z.literal("bridge_inbound"), platform: z.string(), id: z.string().min(1).max(128), body: z.string().max(512 * 1024) }),
    /** What running an action gave. */
    z.object({ type: z.literal("bridge_result"), actionId: z.string().min(1).max(64), result: BridgeResult }),
    /** The local platform daemon as the gateway sees it (signal-cli's `/api/v1/check`). */
    z.object({ type: z.literal("bridge_status"), platform: z.string(), reachable: z.boolean(), detail: z.string().max(500).optional() }),
  ] as const;

/** Connector → gateway frames of the bridge (made on first use, as above). */
export const bridgeConnectorFrames = () =>
  [
    /** A `bridge_inbound` is stored at the edge (taken in, or ignored for good): the gateway may forget it. */
    z.object({ type: z.literal("bridge_inbound_ack"), id: z.string() }),
    /** An action to run on the platform; answered by a `bridge_result` with the same `actionId`. */
    z.object({ type: z.literal("bridge_action"), actionId: z.string(), platform: z.string(), call: SignalCall }),
  ] as const;

export const BRIDGE_GATEWAY_TYPES = ["bridge_inbound", "bridge_result", "bridge_status"];
export const BRIDGE_CONNECTOR_TYPES = ["bridge_inbound_ack", "bridge_action"];
