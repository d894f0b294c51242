import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { findChromium, launchChromium, screenshot, WatchedPage } from "../support/browser.ts";
import { harness, type Harness } from "../support/e2e.ts";
import { tg } from "../support/fixtures.ts";
import { telegramHeaders } from "../support/signing.ts";

/**
 * The web console in a real headless Chromium against the shared e2e Worker: sign-in,
 * sessions, a streamed reply, Stop, a handoff to the fake Telegram, hostile transcripts,
 * phone width. Any console error, page error, dialog, failed request or unexpected HTTP
 * error in the page fails the test. Skipped (one line printed by the e2e global setup)
 * when the machine has no Chromium.
 */
const executable = findChromium();
const FORUM = -100555;
const WAIT = { timeout: 10_000 };

let h: Harness;
let browser: Browser;
/** The sign-in test's own page (it starts signed out). */
let watched: WatchedPage | null = null;
/** One page, signed in once, that the other tests share (see `signedIn`). */
let shared: WatchedPage | null = null;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${h.worker.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${h.worker.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function sessionWith(title: string, ...said: string[]): Promise<string> {
  const { session } = await api<{ session: { id: string } }>("POST", "/v1/sessions", { title });
  for (const content of said)
    await (
      await fetch(`${h.worker.url}/v1/sessions/${session.id}/turns`, {
        method: "POST",
        headers: { authorization: `Bearer ${h.worker.token}` },
        body: JSON.stringify({ content }),
      })
    ).text();
  return session.id;
}

/**
 * The signed-in page at the sessions list, at this size. Signed in once, through the local
 * sign-in link (the token in the fragment), then shared: a test starts from a full load of
 * the console (no DOM or script state left from the one before; the tab's sign-in kept, as
 * on a reload), and a new context and sign-in per test cost about a second each. The sign-in
 * itself is the first test's subject, on its own page.
 */
async function signedIn(opts: { width?: number; height?: number } = {}): Promise<Page> {
  if (shared === null) {
    shared = await WatchedPage.open(browser, opts);
    await shared.page.goto(`${h.worker.url}/#token=${encodeURIComponent(h.worker.token)}`);
  } else {
    await shared.page.setViewportSize({ width: opts.width ?? 1200, height: opts.height ?? 800 });
    await shared.page.goto(`${h.worker.url}/`);
  }
  await shared.page.getByRole("heading", { name: "Sessions" }).waitFor(WAIT);
  return shared.page;
}

describe.skipIf(executable === null)("the web console in Chromium", () => {
  beforeAll(async () => {
    h = await harness();
    browser = await launchChromium(executable!);
  });

  afterAll(async () => {
    await shared?.close();
    await browser?.close();
  });

  afterEach(async () => {
    const problems = [...(watched ? await watched.close() : []), ...(shared?.takeProblems() ?? [])];
    watched = null;
    expect(problems, "problems in the page").toEqual([]);
  });

  it("refuses a wrong token, then signs in from the keyboard; the sign-in link's token leaves the address bar", async () => {
    h.reset();
    watched = await WatchedPage.open(browser);
    const { page } = watched;
    await page.goto(h.worker.url);
    await page.getByLabel("API token").waitFor(WAIT);
    await screenshot(page, "sign-in");
    watched.allow("/console/sign-in", 401);
    await page.keyboard.type("not-the-token");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").filter({ hasText: "not this Worker's API token" }).waitFor(WAIT);
    expect(await page.getByRole("heading", { name: "Sessions" }).count()).toBe(0);
    await page.getByLabel("API token").fill(h.worker.token);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Sessions" }).waitFor(WAIT);
    // The cookie is HttpOnly: the page's script cannot read it.
    expect(await page.evaluate("document.cookie")).toBe("");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API token").waitFor(WAIT);

    await page.goto(`${h.worker.url}/#token=${encodeURIComponent(h.worker.token)}`);
    await page.getByRole("heading", { name: "Sessions" }).waitFor(WAIT);
    expect(page.url()).not.toContain(h.worker.token);
  });

  it("lists sessions newest first, finds one by title, and opens it", async () => {
    h.reset();
    const older = await sessionWith("console: packing list", "what should I pack?");
    const newer = await sessionWith("console: dinner plans", "where do we eat tonight?");
    const page = await signedIn();
    const rows = page.locator("table.sessions tbody tr");
    await rows.filter({ hasText: "console: dinner plans" }).waitFor(WAIT);
    const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-session")));
    expect(ids.indexOf(newer)).toBeLessThan(ids.indexOf(older));
    await screenshot(page, "sessions");
    await page.getByLabel("Search").fill("packing");
    await page.locator(`table.sessions tbody tr[data-session="${newer}"]`).waitFor({ state: "detached", ...WAIT });
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-session")))).toEqual([older]);
    await page.getByRole("link", { name: "console: packing list" }).click();
    await page.getByRole("heading", { name: "console: packing list" }).waitFor(WAIT);
    await page.locator(".msg.assistant", { hasText: "echo: what should I pack?" }).waitFor(WAIT);
  });

  it("streams a reply in as it is written, and Stop interrupts the next one, keeping the partial text", async () => {
    h.reset();
    const id = await sessionWith("console: chat");
    const page = await signedIn();
    await page.goto(`${h.worker.url}/#/sessions/${id}`);
    const gate = h.llm.hold(["The first half ", "of the answer, "], ["and the rest."]);
    await page.getByRole("textbox", { name: "Message" }).fill("tell me **everything**");
    await page.getByRole("button", { name: "Send" }).click();
    const live = page.locator(".msg.assistant.streaming");
    await live.filter({ hasText: "The first half of the answer," }).waitFor(WAIT);
    // Drawn before the reply is over: the turn is still held at the fake model.
    expect(gate.released).toBe(false);
    gate.release();
    await page.getByText("Reply complete.").waitFor(WAIT);
    await page.locator(".msg.assistant", { hasText: "The first half of the answer, and the rest." }).waitFor(WAIT);
    await page.locator(".msg.user strong", { hasText: "everything" }).waitFor(WAIT);

    const held = h.llm.hold(["Partial words "], ["never sent"]);
    await page.getByRole("textbox", { name: "Message" }).fill("and now a long one");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".msg.assistant.streaming", { hasText: "Partial words" }).waitFor(WAIT);
    await screenshot(page, "chat");
    await page.getByRole("button", { name: "Stop" }).click();
    await page.getByText("Stopped: the partial reply is kept.").waitFor(WAIT);
    const stopped = page.locator(".msg.assistant", { hasText: "Partial words" }).last();
    await stopped.locator(".badge", { hasText: "interrupted" }).waitFor(WAIT);
    expect(held.cancelled).toBe(true);
    expect(await stopped.textContent()).not.toContain("never sent");
  });

  it("hands the session to the fake Telegram and shows pending → running → completed with the destination", async () => {
    h.reset();
    h.telegram.forums.add(String(FORUM));
    const sethome = tg.group("/sethome", { chatId: FORUM, userId: 1001 });
    await fetch(`${h.worker.url}/webhooks/telegram`, {
      method: "POST",
      headers: telegramHeaders(),
      body: JSON.stringify({
        ...sethome,
        message: {
          ...sethome.message,
          entities: [{ type: "bot_command", offset: 0, length: 8 }],
          chat: { id: FORUM, type: "supergroup", title: "Forum", is_forum: true },
        },
      }),
    });
    await h.telegram.waitFor((c) => c.path.endsWith("/sendMessage") && String(c.body.text).includes("home channel"));
    const id = await sessionWith("console: trip", "we are planning a trip to Porto");
    const page = await signedIn();
    await page.goto(`${h.worker.url}/#/sessions/${id}`);
    await page.getByLabel("Hand this session to").selectOption("telegram");
    await page.getByRole("button", { name: "Hand off" }).click();
    const done = page.locator('.handoff-state[data-state="completed"]');
    await done.waitFor(WAIT);
    const summary = await h.telegram.waitFor((c) => c.path.endsWith("/sendMessage") && c.body.chat_id === FORUM && c.body.message_thread_id !== undefined);
    const thread = String(summary.body.message_thread_id);
    expect(await done.locator("li.reached").allTextContents()).toEqual([
      expect.stringMatching(/^pending \S/),
      expect.stringMatching(/^running \S/),
      expect.stringMatching(/^completed \S/),
    ]);
    expect(await done.textContent()).toContain(`now in chat ${FORUM}, thread ${thread}`);
    expect(await done.getByRole("link", { name: "Open it in telegram" }).getAttribute("href")).toBe(`https://t.me/c/555/${thread}`);
    await screenshot(page, "session-handoff");
  });

  it("lists people with their linked accounts, and hands a session to a person's DM", async () => {
    // Telegram user 1002 asks for a code and the operator's CLI uses it (hermes-edge link).
    await fetch(`${h.worker.url}/webhooks/telegram`, { method: "POST", headers: telegramHeaders(), body: JSON.stringify(tg.command("link", "", 1002)) });
    const offer = await h.telegram.waitFor((c) => c.path.endsWith("/sendMessage") && String(c.body.text).includes("link code:"));
    const code = /link code: (\S+)/.exec(String(offer.body.text))![1]!;
    const linked = await fetch(`${h.worker.url}/v1/links`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.worker.token}`, "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    const person = ((await linked.json()) as { person: { id: string } }).person.id;
    const page = await signedIn();
    await page.goto(`${h.worker.url}/#/people`);
    await expect.poll(() => page.locator(`[data-person="${person}"]`).textContent()).toContain("telegram user 1002");

    const id = await sessionWith("console: to a DM", "remind me about the dentist");
    await page.goto(`${h.worker.url}/#/sessions/${id}`);
    await page.getByLabel("Hand this session to").selectOption("telegram");
    await page.getByLabel("Where on that platform").selectOption(person);
    await page.getByRole("button", { name: "Hand off" }).click();
    const done = page.locator('.handoff-state[data-state="completed"]');
    await done.waitFor(WAIT);
    expect(await done.textContent()).toContain("now in chat 1002");
    await h.telegram.waitFor(
      (c) => c.path.endsWith("/sendMessage") && String(c.body.chat_id) === "1002" && String(c.body.text).includes("handed off from the CLI"),
    );
  });

  it("saves a new title and instructions, and deletes the session only after the confirmation", async () => {
    const id = await sessionWith("console: to rename", "hello");
    const page = await signedIn();
    await page.goto(`${h.worker.url}/#/sessions/${id}`);
    await page.getByText("Edit title and instructions").click();
    await page.getByLabel("Title").fill("console: renamed");
    await page.getByLabel("Instructions for this session").fill("Answer in French.");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: "console: renamed" }).waitFor(WAIT);
    expect((await api<{ session: { title: string; instructions: string } }>("GET", `/v1/sessions/${id}`)).session).toMatchObject({
      title: "console: renamed",
      instructions: "Answer in French.",
    });

    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("button", { name: "Keep it" }).click();
    expect((await fetch(`${h.worker.url}/v1/sessions/${id}`, { headers: { authorization: `Bearer ${h.worker.token}` } })).status).toBe(200);
    await page.getByRole("button", { name: "Delete…" }).click();
    await page.getByRole("button", { name: "Delete for good" }).click();
    await page.getByRole("heading", { name: "Sessions" }).waitFor(WAIT);
    expect((await fetch(`${h.worker.url}/v1/sessions/${id}`, { headers: { authorization: `Bearer ${h.worker.token}` } })).status).toBe(404);
  });

  it("renders a transcript full of <script>, event handlers and javascript: links as inert text", async () => {
    h.reset();
    const hostile =
      '<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> [click me](javascript:window.__pwned=3) <a href="javascript:window.__pwned=4">raw</a> ![i](https://tracker.test/p.gif)';
    const id = await sessionWith("console: hostile", hostile);
    const page = await signedIn();
    await page.goto(`${h.worker.url}/#/sessions/${id}`);
    const said = page.locator(".msg.user").first();
    await said.waitFor(WAIT);
    expect(await said.textContent()).toContain("<script>window.__pwned = 1</script>");
    const transcript = page.locator(".transcript");
    expect(await transcript.locator("script, img, iframe, [onerror], [onclick]").count()).toBe(0);
    expect(await transcript.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual([
      "https://tracker.test/p.gif",
      "https://tracker.test/p.gif",
    ]);
    await page.locator(".msg.user a", { hasText: "[image: i]" }).waitFor(WAIT);
    expect(await page.evaluate("typeof window.__pwned")).toBe("undefined");
  });

  it("regression: on a phone the message box sat at the bottom of a 5,000-pixel page; a console session said source cli, no state, an empty title field, and raw Markdown for my message", async () => {
    h.reset();
    const page = await signedIn({ width: 390, height: 844 });
    await page.getByRole("button", { name: "New session" }).click();
    await page.getByRole("heading", { name: "(untitled)" }).waitFor(WAIT);
    const id = decodeURIComponent(new URL(page.url()).hash.replace("#/sessions/", ""));
    expect(await page.locator(".meta").textContent()).toContain("sourceconsole");
    await page.locator(".title-row .badge", { hasText: "idle" }).waitFor(WAIT);

    const gate = h.llm.hold(["thinking "], ["done."]);
    await page.getByRole("textbox", { name: "Message" }).fill("plan **the trip** to Lyon");
    await page.getByRole("button", { name: "Send" }).click();
    // Rendered while the reply is still held at the fake model.
    await page.locator(".msg.user.pending strong", { hasText: "the trip" }).waitFor(WAIT);
    expect(gate.released).toBe(false);
    gate.release();
    await page.getByRole("heading", { name: "plan **the trip** to Lyon" }).waitFor(WAIT);
    await page.getByText("Edit title and instructions").click();
    expect(await page.getByLabel("Title").inputValue()).toBe("plan **the trip** to Lyon");

    const long = "A long line of the conversation that wraps several times on a phone screen. ".repeat(5);
    for (let i = 0; i < 12; i++)
      await (
        await fetch(`${h.worker.url}/v1/sessions/${id}/turns`, {
          method: "POST",
          headers: { authorization: `Bearer ${h.worker.token}` },
          body: JSON.stringify({ content: `${i}: ${long}` }),
        })
      ).text();
    await page.reload();
    await page.locator(".msg.assistant", { hasText: "echo: 11:" }).waitFor(WAIT);
    const box = page.getByRole("textbox", { name: "Message" });
    await box.scrollIntoViewIfNeeded();
    const layout = await page.evaluate<{ page: number; view: number; pane: number; paneScroll: number; box: number; last: number; lastTop: number }>(`(() => {
      const pane = document.querySelector(".transcript");
      const last = [...pane.querySelectorAll(".msg")].at(-1).getBoundingClientRect();
      return { page: document.documentElement.scrollHeight, view: innerHeight, pane: pane.clientHeight, paneScroll: pane.scrollHeight, box: document.querySelector("#message").getBoundingClientRect().bottom, last: last.bottom, lastTop: last.top };
    })()`);
    expect(layout.paneScroll, "the transcript scrolls in its own pane").toBeGreaterThan(layout.pane);
    expect(layout.page, "the page is not the transcript's length").toBeLessThan(layout.view * 2.5);
    expect(layout.box, "the message box is on screen").toBeLessThanOrEqual(layout.view);
    expect(layout.lastTop, "with the newest message above it").toBeGreaterThanOrEqual(0);
    expect(layout.last).toBeLessThanOrEqual(layout.box);
    await screenshot(page, "session-phone");
  });

  it("shows platforms and usage, and fits a phone's width", async () => {
    await sessionWith("console: usage titled", "count me");
    const page = await signedIn({ width: 390 });
    // Page functions are strings here: this file is type-checked for Node, which has no DOM.
    const overflow = () => page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
    expect(await overflow()).toBeLessThanOrEqual(0);
    await screenshot(page, "sessions-phone");
    await page.getByRole("link", { name: "Platforms" }).click();
    await page.locator('[data-platform="telegram"]', { hasText: "enabled" }).waitFor(WAIT);
    expect(await page.locator('[data-platform="telegram"]').textContent()).toContain(`${FORUM}`);
    await page.getByText("No relay gateway is configured").waitFor(WAIT);
    // The e2e Worker answers on 127.0.0.1: the steps are a local Worker's.
    expect(await page.locator("#where").inputValue()).toBe("local");
    const steps = (await page.locator('[data-platform="telegram"] .setup-steps').textContent()) ?? "";
    expect(steps).toContain(`cloudflared tunnel --url ${h.worker.url}`);
    expect(steps).toContain("TELEGRAM_ALLOWED_USERS");
    expect(steps).not.toContain("wrangler secret put");
    await page.locator("#where").selectOption("deployed");
    await page.locator('[data-platform="telegram"] .setup-steps[data-where="deployed"]').waitFor(WAIT);
    await page.locator("#where").selectOption("local");
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.getByRole("link", { name: "Usage" }).click();
    await page
      .locator("svg.chart rect")
      .first()
      .waitFor({ state: "attached", ...WAIT });
    await page.locator("table.usage").first().waitFor(WAIT);
    await page.locator("table.usage a", { hasText: "console: usage titled" }).waitFor(WAIT);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1200, height: 800 });
    await screenshot(page, "usage");
    await page.getByRole("link", { name: "Platforms" }).click();
    await page.locator('[data-platform="telegram"]').waitFor(WAIT);
    await screenshot(page, "platforms");
  });
});
