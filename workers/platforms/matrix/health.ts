import { errorMessage } from "../../log/index.ts";
import { PlatformApiError, type PlatformHealth } from "../types.ts";
import { homeserver, type HomeserverSettings } from "./api.ts";

/** The registration's `id` that `hermes-edge setup matrix` writes, and the one pinged. */
export const APPSERVICE_ID = "hermes-edge";

/** The bot as the homeserver sees it with the as_token (`GET /account/whoami`, as the bot user). */
export async function whoami(h: HomeserverSettings): Promise<string> {
  const r = await homeserver<{ user_id?: unknown }>(h, "GET", "/_matrix/client/v3/account/whoami", undefined, "whoami");
  return typeof r.user_id === "string" ? r.user_id : "";
}

/**
 * The homeserver asks the Worker's `/_matrix/app/v1/ping` (spec v1.7 `POST
 * /_matrix/client/v1/appservice/{appserviceId}/ping`): resolves with the round trip it measured.
 */
export async function pingAppservice(h: HomeserverSettings, id = APPSERVICE_ID): Promise<number | null> {
  const r = await homeserver<{ duration_ms?: unknown }>(
    h,
    "POST",
    `/_matrix/client/v1/appservice/${encodeURIComponent(id)}/ping`,
    { transaction_id: `hermes-edge-${Date.now()}` },
    "appservice ping",
    { asUser: false },
  );
  return typeof r.duration_ms === "number" ? r.duration_ms : null;
}

/** The as_token and bot user checked against the homeserver, and whether the homeserver reaches the Worker (`hermes-edge status`). */
export async function matrixHealth(h: HomeserverSettings, origin: string): Promise<PlatformHealth> {
  let user: string;
  try {
    user = await whoami(h);
  } catch (err) {
    const refused = err instanceof PlatformApiError && err.code !== "network" && err.code !== "unavailable";
    return {
      detail: refused ? "as_token or bot user refused" : "homeserver not reachable",
      problems: [
        {
          problem: refused ? `the homeserver refused the bot: ${err.message}` : `cannot reach the homeserver: ${errorMessage(err)}`,
          fix: refused
            ? "check MATRIX_BOT_USER is in the registration's user namespace and MATRIX_AS_TOKEN is its as_token (hermes-edge setup matrix prints both)"
            : "check MATRIX_HOMESERVER_URL, or try again later",
        },
      ],
    };
  }
  const problems: PlatformHealth["problems"] = [];
  if (user.toLowerCase() !== h.botUser.toLowerCase())
    problems.push({ problem: `the homeserver says the bot is ${user || "nobody"}, not ${h.botUser}`, fix: "set MATRIX_BOT_USER to the registration's bot" });
  let ping = "";
  try {
    const ms = await pingAppservice(h);
    ping = ` · the homeserver reached the Worker${ms !== null ? ` in ${ms} ms` : ""}`;
  } catch (err) {
    problems.push({
      problem: `the homeserver could not reach the Worker's application service: ${errorMessage(err)}`,
      fix: `its registration's url must be ${origin}/webhooks/matrix, with the hs_token of MATRIX_HS_TOKEN (hermes-edge setup matrix)`,
    });
  }
  return { detail: `bot ${user || h.botUser} on ${h.homeserverUrl}${ping} · transactions should go to ${origin}/webhooks/matrix`, problems };
}
