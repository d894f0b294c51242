import { describe, expect, it } from "vitest";
import { verifySlack } from "../../workers/platforms/slack/verify.ts";
import { verifyTelegram } from "../../workers/platforms/telegram/verify.ts";
import { DISCORD_MAX_SKEW_S, verifyDiscord } from "../../workers/platforms/discord/verify.ts";
import { MAX_TOKEN_LIFETIME_S, mintRelayToken, verifyRelayToken } from "../../workers/relay/token.ts";
import { DISCORD_TEST_PUBLIC_KEY, discordHeaders, slackHeaders } from "../support/signing.ts";

describe("webhook verification", () => {
  // Slack's published example (api.slack.com/authentication/verifying-requests-from-slack).
  const body =
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
  const secret = "8f742231b10e8888abcd99yyyzzz85a5";
  const raw = (t: string) => new TextEncoder().encode(t);
  const headers = new Headers({
    "x-slack-request-timestamp": "1531420618",
    "x-slack-signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
  });

  it("accepts Slack's published example with the clock at its timestamp", async () => {
    expect(await verifySlack(headers, raw(body), secret, 1531420618 * 1000)).toEqual({ ok: true });
    expect(await verifySlack(headers, raw(body), secret, (1531420618 + 300) * 1000)).toEqual({ ok: true });
  });

  it("rejects it 301 s later, with another secret, or with the body changed", async () => {
    expect(await verifySlack(headers, raw(body), secret, (1531420618 + 301) * 1000)).toEqual({ ok: false, reason: "stale" });
    expect(await verifySlack(headers, raw(body), `${secret}0`, 1531420618 * 1000)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifySlack(headers, raw(`${body}&x=1`), secret, 1531420618 * 1000)).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifySlack(new Headers(), raw(body), secret, 1531420618 * 1000)).toEqual({ ok: false, reason: "missing" });
  });

  it("compares the Telegram secret token exactly", async () => {
    const h = (v: string) => new Headers({ "x-telegram-bot-api-secret-token": v });
    expect(await verifyTelegram(h("s3cret"), "s3cret")).toEqual({ ok: true });
    expect(await verifyTelegram(h("s3cre"), "s3cret")).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyTelegram(new Headers(), "s3cret")).toEqual({ ok: false, reason: "missing" });
  });

  it("checks Discord's Ed25519 signature over timestamp + body, within a freshness window", async () => {
    const payload = raw('{"type":1}');
    const at = 1700000000;
    const signed = new Headers(await discordHeaders(payload, String(at)));
    expect(await verifyDiscord(signed, payload, DISCORD_TEST_PUBLIC_KEY, at * 1000)).toEqual({ ok: true });
    expect(await verifyDiscord(signed, raw('{"type":2}'), DISCORD_TEST_PUBLIC_KEY, at * 1000)).toEqual({ ok: false, reason: "bad_signature" });
    // Regression: an old signed interaction was accepted once its delivery id was pruned.
    expect(await verifyDiscord(signed, payload, DISCORD_TEST_PUBLIC_KEY, (at + DISCORD_MAX_SKEW_S) * 1000)).toEqual({ ok: true });
    expect(await verifyDiscord(signed, payload, DISCORD_TEST_PUBLIC_KEY, (at + DISCORD_MAX_SKEW_S + 1) * 1000)).toEqual({ ok: false, reason: "stale" });
    expect(await verifyDiscord(signed, payload, DISCORD_TEST_PUBLIC_KEY, (at - DISCORD_MAX_SKEW_S - 1) * 1000)).toEqual({ ok: false, reason: "stale" });
    signed.set("x-signature-timestamp", String(at + 1));
    expect(await verifyDiscord(signed, payload, DISCORD_TEST_PUBLIC_KEY, at * 1000)).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("verifies over the raw bytes, so a signed body that is not valid UTF-8 is still genuine (regression: 401)", async () => {
    const invalid = new Uint8Array([...raw('{"type":1,"x":"'), 0xff, 0xfe, 0xc3, ...raw('"}')]);
    const at = 1700000000;
    expect(await verifyDiscord(new Headers(await discordHeaders(invalid, String(at))), invalid, DISCORD_TEST_PUBLIC_KEY, at * 1000)).toEqual({ ok: true });
    const slack = new Headers(await slackHeaders(invalid, "sec", at));
    expect(await verifySlack(slack, invalid, "sec", at * 1000)).toEqual({ ok: true });
  });

  // Regression: relay.suite.ts minted a token with 601 s of lifetime, connected up to a second
  // later and waited for its 4401 close; when the clock crossed a second in between, the
  // token had 600 s left, was accepted, and the socket stayed open until the test timed out.
  it("refuses a relay token whose lifetime is over MAX_TOKEN_LIFETIME_S at the moment of the check, to the second", async () => {
    const at = 1_700_000_000;
    const secrets = new Map([["gw1", ["s3cret"]]]);
    const token = await mintRelayToken("gw1", "s3cret", at + MAX_TOKEN_LIFETIME_S + 1);
    expect(await verifyRelayToken(token, secrets, at)).toEqual({ ok: false, reason: "too_long" });
    expect(await verifyRelayToken(token, secrets, at + 1)).toMatchObject({ ok: true, gatewayId: "gw1" });
  });
});
