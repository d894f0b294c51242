import { Hono } from "hono";
import { consoleAssets, consoleRoutes } from "./console/routes.ts";
import { limitBody, limitTransactionBody, requireApiToken } from "./http/auth.ts";
import { errorBody, handleError } from "./http/errors.ts";
import { dataRoutes, usageRoutes } from "./http/data.ts";
import { handoffRoutes } from "./http/handoff.ts";
import { peopleRoutes } from "./http/people.ts";
import { platformRoutes } from "./http/platforms.ts";
import { relayMedia, relayStatusRoutes, relayUpgrade, relayUpload } from "./http/relay.ts";
import { sessionRoutes } from "./http/sessions.ts";
import { statusRoutes } from "./http/status.ts";
import { webhookRoutes } from "./http/webhooks.ts";
import { VERSION } from "./version.ts";

export { VERSION };

/** The Worker's HTTP surface (SPEC section 1). */
export const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true, service: "hermes-edge", version: VERSION, time: Date.now() }));

app.use("/v1/*", requireApiToken, limitBody);
app.route("/v1/sessions", dataRoutes);
app.route("/v1/sessions", sessionRoutes);
app.route("/v1/sessions", handoffRoutes);
app.route("/v1/platforms", platformRoutes);
app.route("/v1/usage", usageRoutes);
app.route("/v1/relay", relayStatusRoutes);
app.route("/v1/status", statusRoutes);
app.route("/v1", peopleRoutes);
app.get("/relay", (c) => relayUpgrade(c.req.raw, c.env));
app.get("/relay/media/*", (c) => relayMedia(c.req.raw, c.env));
app.put("/relay/upload/*", (c) => relayUpload(c.req.raw, c.env));
app.use("/webhooks/:platform", limitBody);
app.use("/webhooks/:platform/*", limitTransactionBody);
app.route("/webhooks", webhookRoutes);
app.use("/console/*", limitBody);
app.route("/console", consoleRoutes);
// The web console's files; what they do not have either is not found.
app.get("*", async (c) => (await consoleAssets(c)) ?? c.notFound());

app.notFound((c) => c.json(errorBody("not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
app.onError(handleError);
