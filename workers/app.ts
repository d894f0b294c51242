import { Hono } from "hono";
import { limitBody, requireApiToken } from "./http/auth.ts";
import { ApiError, errorBody, handleError } from "./http/errors.ts";
import { sessionRoutes } from "./http/sessions.ts";

export const VERSION = "0.1.0";

/** The Worker's HTTP surface (SPEC section 1). */
export const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true, service: "hermes-edge", version: VERSION, time: Date.now() }));

app.use("/v1/*", requireApiToken, limitBody);
app.route("/v1/sessions", sessionRoutes);
app.get("/v1/platforms", () => {
  throw new ApiError(501, "not_implemented", "platforms are not available in this build yet");
});

app.notFound((c) => c.json(errorBody("not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
app.onError(handleError);
