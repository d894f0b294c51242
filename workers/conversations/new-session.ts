import type { SessionJson } from "../db/json.ts";
import { newSessionId } from "../db/ids.ts";
import type { SessionSeed } from "../db/seed.ts";
import { sessionAgent } from "./stubs.ts";

/** Tries before giving up; with 64 random bits a second try is already out of the ordinary. */
const ATTEMPTS = 4;

/**
 * A new session under a fresh id. The session's object creates it only if that id is
 * free: on a collision another id is made, so a new session never joins an existing one.
 */
export async function createSession(
  env: Env,
  seed: SessionSeed,
  now: () => number = Date.now,
  makeId: (now: number) => string = newSessionId,
): Promise<SessionJson> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const id = makeId(now());
    const created = await sessionAgent(env, id).create(seed);
    if (created.ok) return created.session;
  }
  throw new Error(`could not find a free session id in ${ATTEMPTS} tries`);
}
