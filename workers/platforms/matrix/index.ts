import type { Download } from "../../attachments/index.ts";
import { showMarkdown, type Part, type RenderSpec } from "../parts.ts";
import type {
  Attachment,
  Capabilities,
  CommandStyle,
  HandoffThread,
  Ingest,
  PlatformAdapter,
  PlatformEvent,
  PlatformHealth,
  ReplyTarget,
  Shown,
  SubIntake,
  SubRequest,
  Verification,
} from "../types.ts";
import { homeserver, roomPath, type HomeserverSettings } from "./api.ts";
import { downloadMatrixMedia } from "./files.ts";
import { matrixHealth } from "./health.ts";
import { matrixLink } from "./link.ts";
import { DM_MEMBERS, matrixSource, parseMatrixTransaction, type Invite } from "./parse.ts";
import { serveMatrix } from "./route.ts";
import { RoomFacts } from "./rooms.ts";
import { editContent, messageContent, txnIdFor } from "./send.ts";
import { matrixTarget, matrixTargets, type MatrixTarget } from "./target.ts";
import { verifyMatrix } from "./verify.ts";

export { ENCRYPTED_NOTE } from "./parse.ts";

/** Settings the Matrix adapter runs on. */
export interface MatrixSettings {
  homeserverUrl: string;
  asToken: string;
  hsToken: string;
  botUser: string;
  fetch?: typeof fetch;
  /** The clock of the member-count cache (tests inject one). */
  now?: () => number;
}

/**
 * Matrix counts no characters: an event may not exceed 65,536 bytes (spec). A part of this
 * many UTF-16 units, as body and HTML (and both again in an edit's `m.new_content`), stays
 * well under it; {@link messageContent} drops the HTML of the rare part that would not.
 */
export const MATRIX_CAPABILITIES: Capabilities = {
  maxMessageLength: 4000,
  lengthUnit: "utf16",
  threads: true,
  edits: true,
  typing: true,
  // Edits are events like any other, rate limited per user by the homeserver (an AS user usually not): a measured pace still.
  editIntervalMs: { private: 1000, group: 1500 },
};

/** The Telegram dialect's plain text and entities, written as HTML for `formatted_body` (./html.ts). */
export const MATRIX_RENDER: RenderSpec = { dialect: "telegram", limit: MATRIX_CAPABILITIES.maxMessageLength, unit: MATRIX_CAPABILITIES.lengthUnit };

/** How long a typing notification lasts; the runtime asks again every few seconds. */
const TYPING_MS = 30_000;

/** Matrix as an application service: the homeserver PUTs transactions to the Worker; the Worker acts as the bot user with the as_token. */
export class MatrixAdapter implements PlatformAdapter {
  readonly name = "matrix" as const;
  readonly capabilities = MATRIX_CAPABILITIES;
  readonly targets = matrixTargets;
  readonly commands: CommandStyle = { prefix: "/", howToTalk: "Message me in a DM, or mention me (or reply to me) in a room; commands also work as !name." };
  readonly #s: MatrixSettings;
  readonly #h: HomeserverSettings;
  readonly #rooms: RoomFacts;

  /** Does no I/O. */
  constructor(settings: MatrixSettings) {
    this.#s = settings;
    const f = settings.fetch ?? ((input, init) => fetch(input, init));
    this.#h = { homeserverUrl: settings.homeserverUrl, asToken: settings.asToken, botUser: settings.botUser, fetch: f };
    this.#rooms = new RoomFacts(this.#h, settings.now ?? Date.now);
  }

  /** The homeserver's requests carry the hs_token in a header (or, legacy, the query): see {@link serve}. */
  verify(headers: Headers): Promise<Verification> {
    return verifyMatrix(headers, new URLSearchParams(), this.#s.hsToken);
  }

  /** A transaction body parsed with the member counts known so far (a room not known yet is a group). */
  ingest(body: string): Ingest {
    return parseMatrixTransaction(body, this.#s.botUser, (room) => this.#rooms.known(room));
  }

  serve(req: SubRequest, intake: SubIntake): Promise<Response> {
    return serveMatrix(req, intake, {
      hsToken: this.#s.hsToken,
      botUser: this.#s.botUser,
      learnRooms: (messages, membership) => this.#rooms.learn(messages, membership),
      answerInvite: (invite, accept) => this.#answerInvite(invite, accept),
      ingest: (body) => this.ingest(body),
    });
  }

  /** Records how many members a room has joined (what parsing reads to tell a DM from a group). */
  rememberRoom(roomId: string, joined: number): void {
    this.#rooms.remember(roomId, joined);
  }

  async #answerInvite(invite: Invite, accept: boolean): Promise<void> {
    if (accept) await homeserver(this.#h, "POST", `/_matrix/client/v3/join/${encodeURIComponent(invite.roomId)}`, {}, "join the room");
    else await homeserver(this.#h, "POST", roomPath(invite.roomId, "leave"), { reason: "not an allowed user of this bot" }, "decline the invite");
  }

  ack(_event: PlatformEvent): Response {
    return Response.json({});
  }

  answerInline(): Response | null {
    return null;
  }

  /** PUT with a transaction id derived from what is sent, so a retried send or edit is the same event, not a second one. */
  async #put(roomId: string, content: Record<string, unknown>, salt: string): Promise<string> {
    const txn = await txnIdFor(roomId, salt, content);
    const r = await homeserver<{ event_id?: unknown }>(
      this.#h,
      "PUT",
      roomPath(roomId, `send/m.room.message/${encodeURIComponent(txn)}`),
      content,
      "send message",
    );
    return typeof r.event_id === "string" ? r.event_id : "";
  }

  #io(t: MatrixTarget, ref: string) {
    return {
      scope: `matrix:${ref}`,
      send: (part: Part, index: number) => this.#put(t.roomId, messageContent(part, t, index === 0), `${ref}#${index}`),
      edit: async (id: string, part: Part) => {
        await this.#put(t.roomId, editContent(part, id), `edit:${id}`);
      },
    };
  }

  show(target: ReplyTarget, markdown: string, ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
    return showMarkdown(this.#io(matrixTargets.read(target), target.ref), markdown, MATRIX_RENDER, ids, mode);
  }

  async post(target: ReplyTarget, markdown: string): Promise<string[]> {
    return (await this.show(target, markdown, [], "final")).ids;
  }

  async typing(target: ReplyTarget): Promise<void> {
    const t = matrixTargets.read(target);
    const path = roomPath(t.roomId, `typing/${encodeURIComponent(this.#s.botUser)}`);
    await homeserver(this.#h, "PUT", path, { typing: true, timeout: TYPING_MS }, "typing notification");
  }

  /** A seed message in the room, and the thread on it (`m.thread`, the seed its root). */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    const seed = matrixTargets.read(matrixTarget(parentChatId, null, null, false));
    const title = name.replace(/\s+/g, " ").trim().slice(0, 200) || "Handed-off session";
    const root = await this.#put(seed.roomId, { msgtype: "m.text", body: `🧵 ${title}` }, `handoff:${title}:${crypto.randomUUID()}`);
    if (!root) return null;
    return { chatId: seed.roomId, threadId: root, url: matrixLink(seed.roomId, root) };
  }

  /** Keyed as a message there parses: a DM or group by its member count (asked of the homeserver when not known), the thread root as the thread. */
  async destination(chatId: string, threadId: string | null) {
    matrixTargets.read(matrixTarget(chatId, threadId, null, false));
    await this.#rooms.learn(new Set([chatId]), new Set());
    const members = this.#rooms.known(chatId);
    const direct = members !== null && members <= DM_MEMBERS;
    const { platform, chatType } = matrixSource(chatId, threadId, "", direct);
    return { source: { platform, chatType, chatId, threadId }, target: matrixTarget(chatId, threadId, null, direct) };
  }

  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null } {
    return matrixTargets.where(matrixTargets.read(target));
  }

  download(a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
    return downloadMatrixMedia(this.#h, a, opts);
  }

  health(origin: string): Promise<PlatformHealth> {
    return matrixHealth(this.#h, origin);
  }
}
