import type { AttachmentRecord, AttachmentStatus } from "../attachments/index.ts";
import { migrate, type ComponentSchema, num, str, type Row, type Sql, SessionRows } from "./sql.ts";

const SCHEMA = [
  `CREATE TABLE attachments (
    session TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT,
    mime TEXT,
    size INTEGER,
    seconds REAL,
    status TEXT NOT NULL,
    key TEXT,
    detail TEXT,
    note TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session, turn_id, idx)
  )`,
];

function record(r: Row): AttachmentRecord {
  return {
    index: num(r.idx),
    kind: String(r.kind) as AttachmentRecord["kind"],
    name: str(r.name),
    mime: str(r.mime),
    size: r.size === null || r.size === undefined ? null : num(r.size),
    seconds: r.seconds === null || r.seconds === undefined ? null : num(r.seconds),
    status: String(r.status) as AttachmentStatus,
    key: str(r.key),
    detail: str(r.detail),
    note: String(r.note),
  };
}

/**
 * What came with each turn's user message (files, pictures, voice notes) and how each was
 * read, beside the transcript: the message's text holds a note per file, this table the
 * facts (and where the bytes are kept). A turn's rows are written once, with its message.
 */
export class AttachmentStore extends SessionRows {
  static readonly schema: ComponentSchema = ["attachments", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  /** Stores a turn's attachments (a second call for the same turn changes nothing). */
  put(turnId: string, records: readonly AttachmentRecord[], at: number): void {
    for (const r of records) {
      this.sql.exec(
        "INSERT OR IGNORE INTO attachments (session, turn_id, idx, kind, name, mime, size, seconds, status, key, detail, note, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        this.session,
        turnId,
        r.index,
        r.kind,
        r.name,
        r.mime,
        r.size,
        r.seconds,
        r.status,
        r.key,
        r.detail,
        r.note,
        at,
      );
    }
  }

  /** A turn's attachments, in the order they came. */
  forTurn(turnId: string): AttachmentRecord[] {
    return this.sql.exec("SELECT * FROM attachments WHERE session = ? AND turn_id = ? ORDER BY idx", this.session, turnId).map(record);
  }

  /** Every turn's attachments, oldest first (exports). */
  all(): Array<AttachmentRecord & { turnId: string; createdAt: number }> {
    return this.sql
      .exec("SELECT * FROM attachments WHERE session = ? ORDER BY created_at, turn_id, idx", this.session)
      .map((r) => ({ ...record(r), turnId: String(r.turn_id), createdAt: num(r.created_at) }));
  }

  /** Every kept key of this session (to delete the bytes with it). */
  keys(): string[] {
    return this.sql.exec("SELECT key FROM attachments WHERE session = ? AND key IS NOT NULL", this.session).map((r) => String(r.key));
  }
}
