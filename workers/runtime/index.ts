// The turn runtime shared by the edge (SessionAgent) and the relay gateway. Runtime-neutral:
// it runs on a synchronous SQLite (`Sql`), a `Clock`, and channels to platforms.
export { AttachmentStore } from "./attachments.ts";
export { describe as describeFailure, type ChannelCaps, type ReplyChannel } from "./channel.ts";
export { realClock, sleepOn, type Clock } from "./clock.ts";
export { DeliveryStore, type PendingDelivery } from "./deliveries.ts";
export { deliverFinal, MAX_DELIVERY_ATTEMPTS, type DeliveryEnd, type DeliveryOutcome } from "./delivery.ts";
export { IdleWaiters } from "./idle.ts";
export { SEEN_RETENTION_MS, SeenDeliveries, type SeenTable } from "./seen.ts";
export { TurnQueue, type TurnInput, type TurnOrigin, type TurnRecord } from "./queue.ts";
export { ReplyStreamer, TYPING_REFRESH_MS, type StreamEnd, type StreamerOptions, type TurnSink } from "./reply.ts";
export { SessionRuntime, type BusyPolicy, type NewTurn, type RuntimeHost, type TurnResult } from "./session.ts";
export { durableSql, MissingRowError, migrate, num, str, type DurableStorageLike, type Row, type Sql, type SqlValue } from "./sql.ts";
export { budgetText, EMPTY_TEXT, failureText, replyText, RESTART_FAILURE, STOPPED_TEXT, UNDELIVERED_NOTE } from "./texts.ts";
export { rowMessage, SqlTranscript, type NewMessage, type StoredMessage } from "./transcript.ts";
export { UsageStore, utcDay, type TurnUsage } from "./usage.ts";
export { ContextKeeper } from "./context.ts";
