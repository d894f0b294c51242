/**
 * A fake Matrix homeserver's client-server API, against web Request/Response like the other
 * fakes: sends (deduplicated by transaction id, as homeservers do), typing, joins and
 * leaves, joined members, whoami, versions, the appservice ping, and media (authenticated,
 * or only the legacy endpoint). Wants `Authorization: Bearer <as_token>`; answers the spec's
 * error shape.
 */
import { FakeApi, type ApiCall } from "./fake-platforms.ts";
import { MATRIX_TEST } from "./signing.ts";

const mxError = (status: number, errcode: string, error: string, extra: Record<string, unknown> = {}) =>
  Response.json({ errcode, error, ...extra }, { status });

export class FakeHomeserver extends FakeApi {
  /** Joined members of each room (the bot included once it joined). */
  readonly rooms = new Map<string, Set<string>>();
  /** Media by `server/id`: bytes and type. */
  readonly media = new Map<string, { bytes: Uint8Array; type: string }>();
  /** The homeserver predates authenticated media (spec v1.11): only `/_matrix/media/v3/download` serves files. */
  legacyMediaOnly = false;
  /** A room it does not know is a DM of the bot and someone (benchmarks: each chat its own room, none made beforehand). */
  unknownRoomsAreDms = false;
  /** Transaction ids already sent, with the event id each got. */
  readonly #txns = new Map<string, string>();
  #events = 0;

  override reset(): void {
    super.reset();
    this.rooms.clear();
    this.media.clear();
    this.#txns.clear();
    this.legacyMediaOnly = false;
  }

  /** A room with these joined members. */
  room(roomId: string, members: readonly string[]): void {
    this.rooms.set(roomId, new Set(members));
  }

  /** Every message event the bot sent (a send whose transaction id was new), in order. */
  sent(): ApiCall[] {
    return this.calls.filter((c) => {
      const a = c.answer as { event_id?: unknown; fresh?: boolean } | null;
      return c.method === "PUT" && /\/send\/m\.room\.message\//.test(c.path) && typeof a?.event_id === "string" && a.fresh !== false;
    });
  }

  /** The plain bodies of new messages (no edits), in order. */
  replies(): string[] {
    return this.sent()
      .filter((c) => (c.body["m.relates_to"] as { rel_type?: unknown } | undefined)?.rel_type !== "m.replace")
      .map((c) => String(c.body.body));
  }

  /** The plain bodies the bot sent or edited to (edits: the new text), in order. */
  texts(): string[] {
    return this.sent().map((c) => String(((c.body["m.new_content"] as { body?: unknown } | undefined) ?? c.body).body));
  }

  protected answer(call: ApiCall, req: Request): Response {
    const url = new URL(req.url);
    const path = url.pathname;
    if (path === "/_matrix/client/versions") return Response.json({ versions: ["v1.10", "v1.11"] });
    const media = /^\/_matrix\/(client\/v1|media\/v3)\/media\/download\/([^/]+)\/([^/]+)$|^\/_matrix\/media\/v3\/download\/([^/]+)\/([^/]+)$/.exec(path);
    if (media)
      return this.#media(req, media[1] === "client/v1", `${decodeURIComponent(media[2] ?? media[4] ?? "")}/${decodeURIComponent(media[3] ?? media[5] ?? "")}`);
    if (req.headers.get("authorization") !== `Bearer ${MATRIX_TEST.asToken}`) return mxError(401, "M_UNKNOWN_TOKEN", "Unrecognised access token.");
    const user = url.searchParams.get("user_id") ?? MATRIX_TEST.bot;
    if (path === "/_matrix/client/v3/account/whoami") return Response.json({ user_id: user });
    if (/^\/_matrix\/client\/v1\/appservice\/[^/]+\/ping$/.test(path)) return Response.json({ duration_ms: 12 });
    const join = /^\/_matrix\/client\/v3\/join\/([^/]+)$/.exec(path);
    if (join && call.method === "POST") {
      const room = decodeURIComponent(join[1] ?? "");
      this.rooms.set(room, new Set([...(this.rooms.get(room) ?? []), user]));
      return Response.json({ room_id: room });
    }
    const m = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/(.+)$/.exec(path);
    if (!m) return mxError(404, "M_UNRECOGNIZED", "Unrecognized request");
    const room = decodeURIComponent(m[1] ?? "");
    const rest = m[2] ?? "";
    if (this.unknownRoomsAreDms && !this.rooms.has(room)) this.rooms.set(room, new Set([MATRIX_TEST.bot, "@peer:example.org"]));
    const members = this.rooms.get(room);
    if (rest === "leave" && call.method === "POST") {
      members?.delete(user);
      return Response.json({});
    }
    if (!members?.has(user)) return mxError(403, "M_FORBIDDEN", `User ${user} not in room ${room}`);
    if (rest === "joined_members") return Response.json({ joined: Object.fromEntries([...members].map((u) => [u, { display_name: null }])) });
    if (rest.startsWith("typing/") && call.method === "PUT") return Response.json({});
    const send = /^send\/m\.room\.message\/([^/]+)$/.exec(rest);
    if (send && call.method === "PUT") {
      const key = `${user}|${send[1]}`;
      const known = this.#txns.get(key);
      if (known) return Response.json({ event_id: known, fresh: false });
      const id = `$fake${++this.#events}-${this.nextId()}`;
      this.#txns.set(key, id);
      return Response.json({ event_id: id });
    }
    return mxError(404, "M_UNRECOGNIZED", "Unrecognized request");
  }

  #media(req: Request, authenticated: boolean, key: string): Response {
    if (authenticated && this.legacyMediaOnly) return mxError(404, "M_UNRECOGNIZED", "Unrecognized request");
    if (authenticated && req.headers.get("authorization") !== `Bearer ${MATRIX_TEST.asToken}`) return mxError(401, "M_MISSING_TOKEN", "Missing access token");
    const file = this.media.get(key);
    if (!file) return mxError(404, "M_NOT_FOUND", "Not found");
    return new Response(file.bytes, { headers: { "content-type": file.type, "content-length": String(file.bytes.byteLength) } });
  }
}
