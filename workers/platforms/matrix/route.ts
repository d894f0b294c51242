import { logger } from "../../log/index.ts";
import { PlatformApiError, type Ingest, type SubIntake, type SubRequest } from "../types.ts";
import type { Invite } from "./parse.ts";
import { invitesOf, roomsOf, transactionEvents } from "./parse.ts";
import { verifyMatrix } from "./verify.ts";

/** What the route needs of the adapter: its hs_token and bot, room facts, and the calls invites make. */
export interface MatrixRouteDeps {
  hsToken: string;
  botUser: string;
  /** Learns the member counts parsing needs (forgetting rooms whose membership changed); rejects when the homeserver cannot say. */
  learnRooms(messages: ReadonlySet<string>, membership: ReadonlySet<string>): Promise<void>;
  /** Joins (accept) or leaves (decline) a room the bot was invited to. */
  answerInvite(invite: Invite, accept: boolean): Promise<void>;
  /** The transaction parsed with what was learnt (no I/O). */
  ingest(body: string): Ingest;
}

const matrixError = (status: number, errcode: string, error: string) => Response.json({ errcode, error }, { status });

/** The answer to a transaction the homeserver must not resend, or a ping: `{}`. */
const done = () => Response.json({});

/** `/_matrix/app/v1/transactions/{txnId}` or the legacy `/transactions/{txnId}`: the transaction id, or null. */
function transactionId(path: string): string | null {
  const m = /^(?:\/_matrix\/app\/v1)?\/transactions\/([^/]{1,255})$/.exec(path);
  if (!m?.[1]) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

/**
 * The application-service API under the registered URL (spec "Application Service API"):
 * every request is authenticated first (hs_token, {@link verifyMatrix}: 403 `M_FORBIDDEN`
 * otherwise, before the body is read); then `PUT …/transactions/{txnId}` is taken in and
 * answered `200 {}` once stored (a txnId done before is answered at once, untouched),
 * `POST /_matrix/app/v1/ping` is answered `{}`, anything else 404 `M_UNRECOGNIZED` (405 for a
 * known path with another method).
 */
export async function serveMatrix(req: SubRequest, intake: SubIntake, deps: MatrixRouteDeps): Promise<Response> {
  const log = logger.child("matrix");
  const verified = await verifyMatrix(req.headers, req.query, deps.hsToken);
  if (!verified.ok) {
    log.warn(`homeserver request refused (${verified.reason})`);
    return matrixError(403, "M_FORBIDDEN", "bad or missing hs_token");
  }
  const txn = transactionId(req.path);
  const ping = req.path === "/_matrix/app/v1/ping";
  if (txn === null && !ping) return matrixError(404, "M_UNRECOGNIZED", "unknown application service endpoint");
  if ((txn !== null && req.method !== "PUT") || (ping && req.method !== "POST")) return matrixError(405, "M_UNRECOGNIZED", "method not allowed here");
  if (ping) return done();
  const key = `matrix:txn:${txn}`;
  if (await intake.done(key)) return done();
  const body = new TextDecoder().decode(req.raw);
  const got = transactionEvents(body);
  if ("refused" in got) {
    // Resending a body that does not parse would not make it parse: answered, logged once.
    log.warn(`ignored a transaction that does not match the spec's shape (${got.refused})`);
    await intake.markDone(key);
    return done();
  }
  const rooms = roomsOf(got.events);
  await deps.learnRooms(rooms.messages, rooms.membership);
  for (const invite of invitesOf(got.events, deps.botUser)) {
    await deps.answerInvite(invite, intake.allowed(invite.sender)).catch((err: unknown) => {
      // The homeserver down: the transaction fails and is sent again. A room that is gone or refuses the bot stays so: logged, not retried.
      if (err instanceof PlatformApiError && err.retryable) throw err;
      log.warn(`could not answer the invite to ${invite.roomId}`, { err });
    });
  }
  const ingest = deps.ingest(body);
  if (ingest.kind === "batch") await intake.take(ingest);
  await intake.markDone(key);
  return done();
}
