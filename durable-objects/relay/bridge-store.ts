import type { BridgeActionIn, BridgeResult, SignalCall } from "../../workers/relay/bridge.ts";
import { migrate, num, type Row, type Sql } from "../../workers/runtime/index.ts";

const SCHEMA = [
  // Actions for a bridging gateway, in order, until it confirms each (bridge_result).
  // sent_conn: the socket the action last went out on; not_before: a retry's earliest time.
  `CREATE TABLE bridge_actions (seq INTEGER PRIMARY KEY AUTOINCREMENT, action_id TEXT NOT NULL UNIQUE, platform TEXT NOT NULL,
     call TEXT NOT NULL, ref TEXT, edit_of TEXT, live INTEGER NOT NULL DEFAULT 0, sent_conn TEXT, not_before INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL);
  CREATE INDEX bridge_actions_ref ON bridge_actions (ref);
  CREATE INDEX bridge_actions_edit_of ON bridge_actions (edit_of);
  CREATE TABLE bridge_refs (ref TEXT PRIMARY KEY, ts INTEGER NOT NULL, edits INTEGER NOT NULL DEFAULT 0, at INTEGER NOT NULL);
  CREATE INDEX bridge_refs_at ON bridge_refs (at);
  CREATE TABLE bridge_directory (number TEXT PRIMARY KEY, uuid TEXT NOT NULL, at INTEGER NOT NULL);
  CREATE TABLE bridge_state (platform TEXT PRIMARY KEY, reachable INTEGER NOT NULL, detail TEXT, at INTEGER NOT NULL);
  CREATE TABLE bridge_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
];

/** Live (streaming) edits per message at most: Signal clients drop a message's edits past 100 (Signal-iOS `maxReceiveEdits`), finals need room. */
export const LIVE_EDITS_PER_MESSAGE = 40;
/** Actions kept per gateway while it is away; past this the oldest are dropped (and counted). */
export const BRIDGE_ACTIONS_LIMIT = 10_000;
/** What a message's ref is remembered for (edits come within a turn; a day is plenty). */
const REF_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A stored action. */
export interface StoredAction {
  actionId: string;
  platform: string;
  call: SignalCall;
  ref: string | null;
  editOf: string | null;
  sentConn: string | null;
  notBefore: number;
}

function stored(r: Row): StoredAction {
  return {
    actionId: String(r.action_id),
    platform: String(r.platform),
    call: JSON.parse(String(r.call)) as SignalCall,
    ref: r.ref === null ? null : String(r.ref),
    editOf: r.edit_of === null ? null : String(r.edit_of),
    sentConn: r.sent_conn === null ? null : String(r.sent_conn),
    notBefore: num(r.not_before),
  };
}

/** The text of a send (what coalescing replaces). */
function content(call: SignalCall): Record<string, unknown> {
  if (call.method !== "send") return {};
  const { message, textStyle } = call.params;
  return { message, textStyle };
}

/**
 * A Relay object's bridge tables: the ordered action queue (durable until confirmed), the
 * Signal timestamp each message ref got (and its latest edit's), the numbers → UUIDs the
 * gateway has shown, and what it last said about its daemon.
 */
export class BridgeStore {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
    migrate(sql, "relay-bridge", SCHEMA);
  }

  /**
   * Stores actions in order. A streaming update of a message whose send or edit still waits
   * here (not yet sent) replaces that one's text instead of queuing another; live edits past
   * {@link LIVE_EDITS_PER_MESSAGE} are dropped (the final one always goes). Returns how many were kept.
   */
  enqueue(platform: string, actions: readonly BridgeActionIn[], now: number): number {
    let kept = 0;
    for (const a of actions) {
      const target = a.editOf ?? null;
      if (target !== null) {
        const waiting = this.#sql.exec(
          "SELECT seq, call FROM bridge_actions WHERE (ref = ? OR edit_of = ?) AND sent_conn IS NULL ORDER BY seq DESC LIMIT 1",
          target,
          target,
        )[0];
        if (waiting) {
          const call = JSON.parse(String(waiting.call)) as SignalCall;
          if (call.method === "send") {
            const merged = { ...call, params: { ...call.params, ...content(a.call) } } as SignalCall;
            if (merged.method === "send" && a.call.method === "send" && a.call.params.textStyle === undefined) delete merged.params.textStyle;
            this.#sql.exec("UPDATE bridge_actions SET call = ?, live = ? WHERE seq = ?", JSON.stringify(merged), a.live ? 1 : 0, num(waiting.seq));
            kept++;
            continue;
          }
        }
        if (a.live && this.#editsOf(target) >= LIVE_EDITS_PER_MESSAGE) continue;
      }
      this.#sql.exec(
        "INSERT INTO bridge_actions (action_id, platform, call, ref, edit_of, live, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        crypto.randomUUID(),
        platform,
        JSON.stringify(a.call),
        a.ref ?? null,
        target,
        a.live ? 1 : 0,
        now,
      );
      kept++;
    }
    const excess = this.waiting() - BRIDGE_ACTIONS_LIMIT;
    if (excess > 0) {
      this.#sql.exec("DELETE FROM bridge_actions WHERE seq IN (SELECT seq FROM bridge_actions ORDER BY seq LIMIT ?)", excess);
      this.#count("dropped", excess);
    }
    return kept;
  }

  /** Edits made or waiting for a message. */
  #editsOf(ref: string): number {
    const done = num(this.#sql.exec("SELECT edits FROM bridge_refs WHERE ref = ?", ref)[0]?.edits);
    return done + num(this.#sql.exec("SELECT COUNT(*) AS n FROM bridge_actions WHERE edit_of = ?", ref)[0]?.n);
  }

  /** The oldest action (the only one in flight: they go one at a time, in order). */
  head(): StoredAction | null {
    const r = this.#sql.exec("SELECT * FROM bridge_actions ORDER BY seq LIMIT 1")[0];
    return r ? stored(r) : null;
  }

  /** The call as it goes out: an edit names the latest Signal timestamp of its message (or, with none, is a fresh send). */
  resolve(a: StoredAction): SignalCall {
    if (a.call.method !== "send" || a.editOf === null) return a.call;
    const ts = this.#sql.exec("SELECT ts FROM bridge_refs WHERE ref = ?", a.editOf)[0]?.ts;
    return ts === undefined || ts === null ? a.call : { ...a.call, params: { ...a.call.params, editTimestamp: num(ts) } };
  }

  markSent(actionId: string, connId: string): void {
    this.#sql.exec("UPDATE bridge_actions SET sent_conn = ? WHERE action_id = ?", connId, actionId);
  }

  /**
   * The gateway's answer to an action. Done (success, or a refusal not worth retrying): it
   * leaves the queue, and a send's timestamp becomes its message's (an edit's, the latest
   * one, which the next edit must name). A retryable failure keeps it, to go again after
   * `retryAt`. Returns what happened, or null for an action not (or no longer) here.
   */
  settle(actionId: string, result: BridgeResult, now: number, retryAt: number | null): "done" | "failed" | "retry" | null {
    const r = this.#sql.exec("SELECT * FROM bridge_actions WHERE action_id = ?", actionId)[0];
    if (!r) return null;
    const a = stored(r);
    if (!result.success && retryAt !== null) {
      this.#sql.exec("UPDATE bridge_actions SET sent_conn = NULL, not_before = ? WHERE action_id = ?", retryAt, actionId);
      return "retry";
    }
    this.#sql.exec("DELETE FROM bridge_actions WHERE action_id = ?", actionId);
    if (!result.success) {
      this.#count("failed", 1);
      return "failed";
    }
    const ref = a.ref ?? a.editOf;
    if (ref !== null && result.timestamp !== undefined && a.call.method === "send") {
      this.#sql.exec(
        "INSERT INTO bridge_refs (ref, ts, edits, at) VALUES (?, ?, ?, ?) ON CONFLICT(ref) DO UPDATE SET ts = excluded.ts, edits = edits + ?, at = excluded.at",
        ref,
        result.timestamp,
        0,
        now,
        a.editOf !== null ? 1 : 0,
      );
    }
    this.#sql.exec("DELETE FROM bridge_refs WHERE at < ?", now - REF_RETENTION_MS);
    return "done";
  }

  /** Drops typing actions that have not gone out (a gateway that is away needs no stale "typing…"). */
  dropTransient(): void {
    this.#sql.exec("DELETE FROM bridge_actions WHERE sent_conn IS NULL AND json_extract(call, '$.method') = 'sendTyping'");
  }

  waiting(): number {
    return num(this.#sql.exec("SELECT COUNT(*) AS n FROM bridge_actions")[0]?.n);
  }

  counter(name: "dropped" | "failed"): number {
    return num(this.#sql.exec("SELECT value FROM bridge_counters WHERE name = ?", name)[0]?.value);
  }

  #count(name: string, by: number): void {
    this.#sql.exec("INSERT INTO bridge_counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", name, by);
  }

  /** A number and the UUID the gateway saw it with. */
  learn(number: string, uuid: string, now: number): void {
    this.#sql.exec(
      "INSERT INTO bridge_directory (number, uuid, at) VALUES (?, ?, ?) ON CONFLICT(number) DO UPDATE SET uuid = excluded.uuid, at = excluded.at",
      number,
      uuid,
      now,
    );
  }

  uuidOf(number: string): string | null {
    const r = this.#sql.exec("SELECT uuid FROM bridge_directory WHERE number = ?", number)[0];
    return r ? String(r.uuid) : null;
  }

  setDaemon(platform: string, reachable: boolean, detail: string | null, now: number): void {
    this.#sql.exec(
      "INSERT INTO bridge_state (platform, reachable, detail, at) VALUES (?, ?, ?, ?) ON CONFLICT(platform) DO UPDATE SET reachable = excluded.reachable, detail = excluded.detail, at = excluded.at",
      platform,
      reachable ? 1 : 0,
      detail,
      now,
    );
  }

  daemon(platform: string): { reachable: boolean | null; detail: string | null } {
    const r = this.#sql.exec("SELECT reachable, detail FROM bridge_state WHERE platform = ?", platform)[0];
    return r ? { reachable: num(r.reachable) === 1, detail: r.detail === null ? null : String(r.detail) } : { reachable: null, detail: null };
  }
}
