import { json } from "../api.ts";
import { ago, h, notice, num, replace } from "../dom.ts";
import type { Session } from "../types.ts";
import { stateBadges } from "./badges.ts";
import { errorMessage } from "../../../log/error.ts";

const PAGE = 50;
/** How often the list refreshes itself while it is on screen. */
const REFRESH_MS = 5_000;
const SOURCES = ["", "cli", "console", "telegram", "discord", "slack"];

function row(s: Session): HTMLElement {
  return h(
    "tr",
    { "data-session": s.id },
    h(
      "td",
      { "data-label": "Session" },
      h("a", { href: `#/sessions/${encodeURIComponent(s.id)}` }, s.title ?? "(untitled)"),
      h("div", { class: "muted mono" }, s.id),
    ),
    h("td", { "data-label": "Source" }, s.source),
    h("td", { "data-label": "State" }, stateBadges(s)),
    h("td", { "data-label": "Messages", class: "num" }, num(s.message_count)),
    h("td", { "data-label": "Tokens", class: "num" }, `${num(s.input_tokens)} / ${num(s.output_tokens)}`),
    h("td", { "data-label": "Active" }, h("time", { datetime: new Date(s.last_active_at).toISOString() }, ago(s.last_active_at))),
  );
}

/** Sessions, newest first, kept live; filtered by source, searched by title or id; paged. */
export async function sessionsView(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const search = h("input", { id: "search", type: "search", placeholder: "title or id", autocomplete: "off" });
  const source = h("select", { id: "source" }, ...SOURCES.map((s) => h("option", { value: s }, s || "all sources")));
  const create = h("button", { type: "button" }, "New session");
  const body = h("tbody");
  const more = h("button", { type: "button", class: "quiet", hidden: true }, "Load more");
  const empty = h("p", { class: "muted", hidden: true }, "No sessions yet. Start one here, with `npm start`, or from a chat platform.");
  let shown = PAGE;
  let next: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  signal.addEventListener("abort", () => clearTimeout(timer));

  const query = (limit: number, before?: string) => {
    const p = new URLSearchParams({ limit: String(Math.min(limit, 200)) });
    if (search.value.trim()) p.set("q", search.value.trim());
    if (source.value) p.set("source", source.value);
    if (before) p.set("before", before);
    return `/v1/sessions?${p}`;
  };

  const load = async () => {
    const page = await json<{ sessions: Session[]; next: string | null }>("GET", query(shown), undefined, signal);
    next = page.next;
    replace(body, ...page.sessions.map(row));
    more.hidden = next === null || shown >= 200;
    empty.hidden = page.sessions.length > 0;
  };
  // Drawn again every few seconds (not while the tab is hidden), and at once on any change.
  const again = (): void => {
    if (!signal.aborted) timer = setTimeout(() => (document.hidden ? again() : refresh()), REFRESH_MS);
  };
  const refresh = (): void => {
    clearTimeout(timer);
    void load()
      .catch(() => undefined)
      .finally(again);
  };

  let typing: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(refresh, 250);
  });
  source.addEventListener("change", refresh);
  more.addEventListener("click", () => {
    shown += PAGE;
    refresh();
  });
  create.addEventListener("click", () => {
    create.disabled = true;
    json<{ session: Session }>("POST", "/v1/sessions", {})
      .then(({ session }) => (location.hash = `#/sessions/${encodeURIComponent(session.id)}`))
      .catch((err: unknown) => create.after(notice(`Could not start a session: ${errorMessage(err)}`, "error")))
      .finally(() => (create.disabled = false));
  });

  replace(
    root,
    h("div", { class: "title-row" }, h("h1", {}, "Sessions"), create),
    h("div", { class: "toolbar", role: "search" }, h("label", { for: "search" }, "Search"), search, h("label", { for: "source" }, "Source"), source),
    h(
      "table",
      { class: "sessions" },
      h("thead", {}, h("tr", {}, ...["Session", "Source", "State", "Messages", "Tokens in / out", "Active"].map((t) => h("th", { scope: "col" }, t)))),
      body,
    ),
    empty,
    more,
  );
  await load();
  again();
}
