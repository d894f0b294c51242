// The turn runtime shared by the edge (SessionAgent) and the relay gateway. Runtime-neutral:
// it runs on a synchronous SQLite (`Sql`), a `Clock`, and channels to platforms.
export { AttachmentStore } from "./attachments.ts";
export type { ChannelCaps, ReplyChannel } from "./channel.ts";
export { realClock, type Clock } from "./clock.ts";
export { DeliveryStore } from "./deliveries.ts";
export { IdleWaiters } from "./idle.ts";
export { SeenDeliveries } from "./seen.ts";
export { TurnQueue, type TurnRecord } from "./queue.ts";
export { ReplyStreamer, type TurnSink } from "./reply.ts";
export { SessionRuntime, type BusyPolicy, type RuntimeHost } from "./session.ts";
export { durableSql, MissingRowError, migrate, migrateAll, num, str, type ComponentSchema, type Row, type Sql, type SqlValue } from "./sql.ts";
export { budgetText, RESTART_FAILURE, STOPPED_TEXT, UNDELIVERED_NOTE } from "./texts.ts";
export { rowMessage, SqlTranscript, type StoredMessage } from "./transcript.ts";
export { UsageStore, utcDay, type TurnUsage } from "./usage.ts";
export { ContextKeeper } from "./context.ts";
