import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../workers/app.ts";
import { TOKEN } from "./helpers.ts";

/** The Worker's env with some settings misspelt; a new env object is parsed afresh (settings are cached per env). */
const misconfigured = () => ({ ...env, DAILY_TOKEN_BUDGET: "10k", BUSY_POLICY: "interupt", RELAY_SECRETS: "gw1-without-a-colon-s3cr3t" }) as Env;

async function get(path: string, e: Env): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await app.fetch(new Request(`http://edge.test${path}`, { headers: { authorization: `Bearer ${TOKEN}` } }), e);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const BUDGET = "DAILY_TOKEN_BUDGET=10k is not a positive whole number: the budget is off (unlimited); write a number such as 10000";
const POLICY = "BUSY_POLICY=interupt is not one of queue, interrupt: queue is used; write 'queue' or 'interrupt'";
const SECRETS = "RELAY_SECRETS (value not shown) has 1 entry that is not gatewayId:secret and is ignored; write gatewayId:secret pairs separated by commas";

describe("settings that say what is wrong", () => {
  afterEach(() => vi.restoreAllMocks());

  it("GET /v1/status lists each setting it did not understand, with where to fix it; a secret's value is never shown", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const e = misconfigured();
    const { status, body } = await get("/v1/status", e);
    expect(status).toBe(200);
    expect(body.setting_problems).toEqual([
      { setting: "BUSY_POLICY", value: "interupt", message: POLICY },
      { setting: "DAILY_TOKEN_BUDGET", value: "10k", message: BUDGET },
      { setting: "RELAY_SECRETS", value: null, message: SECRETS },
    ]);
    const problems = (body.problems as Array<{ area: string; problem: string; fix: string }>).filter((p) => p.area === "settings");
    expect(problems.map((p) => p.problem)).toEqual([POLICY, BUDGET, SECRETS]);
    expect(problems[1]!.fix).toBe(
      "correct DAILY_TOKEN_BUDGET in wrangler.toml [vars] and deploy again (npm run deploy); locally: wrangler dev --var DAILY_TOKEN_BUDGET:…",
    );
    expect(problems[2]!.fix).toBe("npx wrangler secret put RELAY_SECRETS (locally: .dev.vars)");
    expect(JSON.stringify(body)).not.toContain("s3cr3t");
    // Logged once per isolate, with the component prefix and no secret: not again for a new env object.
    await get("/v1/status", misconfigured());
    const lines = warn.mock.calls.map((c) => String(c[0]));
    expect(lines).toEqual([`[settings] ${POLICY}`, `[settings] ${BUDGET}`, `[settings] ${SECRETS}`]);
  });

  it("GET /v1/platforms carries the same problems for the console; a Worker set up right has none", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const bad = await get("/v1/platforms", misconfigured());
    expect((bad.body.setting_problems as Array<{ setting: string }>).map((p) => p.setting)).toEqual(["BUSY_POLICY", "DAILY_TOKEN_BUDGET", "RELAY_SECRETS"]);
    const good = await get("/v1/platforms", env);
    expect(good.body.setting_problems).toEqual([]);
  });
});
