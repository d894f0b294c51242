import { describe, expect, it } from "vitest";
import { SlackCallError, slackCall } from "../../workers/platforms/slack/web-api.ts";

/**
 * The Slack Web API client that replaced @slack/web-api's WebClient in the Worker (its
 * Node built-ins cost a cold isolate most of its start-up, docs/startup.md): the request it
 * sends and how each failure comes back, as the WebClient sent and reported them.
 */
function client(answer: (req: Request) => Response | Promise<Response>) {
  const seen: Request[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    seen.push(req.clone());
    return answer(req);
  };
  return { seen, api: { token: "xoxb-test", apiUrl: "https://slack.test/api/", fetch: fetchImpl } };
}

async function failure(p: Promise<unknown>): Promise<SlackCallError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SlackCallError);
  return err as SlackCallError;
}

describe("slackCall: Slack's Web API over fetch", () => {
  it("POSTs the method's arguments form-encoded (objects as JSON, absent ones left out) with the token as a bearer, following no redirect", async () => {
    const { seen, api } = client(() => Response.json({ ok: true, ts: "1700000000.000100" }));
    const res = await slackCall<{ ts: string }>(api, "chat.postMessage", { channel: "C1", text: "a & b", thread_ts: undefined, blocks: [{ type: "x" }] });
    expect(res.ts).toBe("1700000000.000100");
    const req = seen[0];
    expect(req?.url).toBe("https://slack.test/api/chat.postMessage");
    expect(req?.method).toBe("POST");
    expect(req?.redirect).toBe("manual");
    expect(req?.headers.get("authorization")).toBe("Bearer xoxb-test");
    expect(req?.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(await req?.text()))).toEqual({ channel: "C1", text: "a & b", blocks: '[{"type":"x"}]' });
  });

  it("reports ok: false as a platform error carrying Slack's answer", async () => {
    const { api } = client(() => Response.json({ ok: false, error: "channel_not_found" }));
    const err = await failure(slackCall(api, "chat.postMessage", { channel: "C404", text: "x" }));
    expect(err.kind).toBe("platform");
    expect(err.data?.error).toBe("channel_not_found");
    expect(err.message).toBe("An API error occurred: channel_not_found");
  });

  it("reports a 429 with its Retry-After in seconds, any other status but 200 as an HTTP error, a failed fetch as a request error", async () => {
    const limited = await failure(slackCall(client(() => new Response("", { status: 429, headers: { "retry-after": "7" } })).api, "auth.test", {}));
    expect(limited).toMatchObject({ kind: "rate_limited", retryAfter: 7 });
    const down = await failure(slackCall(client(() => new Response("oops", { status: 503 })).api, "auth.test", {}));
    expect(down).toMatchObject({ kind: "http", statusCode: 503 });
    const gone = await failure(
      slackCall(
        client(() => {
          throw new TypeError("fetch failed");
        }).api,
        "auth.test",
        {},
      ),
    );
    expect(gone).toMatchObject({ kind: "request", message: "A request error occurred: fetch failed" });
  });

  it("reports a 429 without a usable Retry-After (a proxy's) as a rate limit naming no wait, not as an untyped error", async () => {
    for (const headers of [{}, { "retry-after": "soon" }, { "retry-after": "-3" }] as Record<string, string>[]) {
      const limited = await failure(slackCall(client(() => new Response("", { status: 429, headers })).api, "auth.test", {}));
      expect(limited.kind).toBe("rate_limited");
      expect(limited.retryAfter).toBeUndefined();
    }
  });

  it("keeps only the start of a long answer that is not JSON", async () => {
    const err = await failure(slackCall(client(() => new Response(`<html>${"x".repeat(100_000)}`, { status: 200 })).api, "auth.test", {}));
    expect(err.kind).toBe("platform");
    expect(err.data?.error).toHaveLength(200);
  });

  it("reads an answer that is not JSON as Slack refusing the call", async () => {
    const err = await failure(slackCall(client(() => new Response("<html>", { status: 200 })).api, "auth.test", {}));
    expect(err).toMatchObject({ kind: "platform", data: { ok: false, error: "<html>" } });
  });
});
