import { json } from "../api.ts";
import { h, num, replace, svg } from "../dom.ts";
import type { UsageRow } from "../types.ts";

const DAYS = 30;

/** Tokens per UTC day, the last DAYS days, as bars (input below, output on top). */
function dayChart(rows: UsageRow[]): HTMLElement {
  const byDay = new Map(rows.map((r) => [r.key, r]));
  const days: string[] = [];
  const today = new Date();
  for (let i = DAYS - 1; i >= 0; i--)
    days.push(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i)).toISOString().slice(0, 10));
  const max = Math.max(1, ...days.map((d) => (byDay.get(d)?.input_tokens ?? 0) + (byDay.get(d)?.output_tokens ?? 0)));
  const [W, H, bar] = [DAYS * 10, 100, 8];
  const bars = days.flatMap((d, i) => {
    const r = byDay.get(d);
    const inH = ((r?.input_tokens ?? 0) / max) * H;
    const outH = ((r?.output_tokens ?? 0) / max) * H;
    const label = `${d}: ${num(r?.input_tokens ?? 0)} in, ${num(r?.output_tokens ?? 0)} out`;
    return [
      svg("rect", { x: i * 10 + 1, y: H - inH, width: bar, height: inH, class: "in" }, svg("title", {}, label)),
      svg("rect", { x: i * 10 + 1, y: H - inH - outH, width: bar, height: outH, class: "out" }, svg("title", {}, label)),
    ];
  });
  const chart = svg(
    "svg",
    {
      viewBox: `0 0 ${W} ${H}`,
      role: "img",
      "aria-label": `Tokens per day, last ${DAYS} days; busiest day ${num(max)} tokens`,
      class: "chart",
      preserveAspectRatio: "none",
    },
    ...bars,
  );
  return h(
    "figure",
    { class: "chart-box" },
    chart,
    h(
      "figcaption",
      {},
      h("span", { class: "key in" }, "input"),
      " ",
      h("span", { class: "key out" }, "output"),
      ` · ${days[0]} to ${days.at(-1)} (UTC) · top ${num(max)} tokens`,
    ),
  );
}

/** A row's first cell: a session by its title (or "(untitled)") over its id, linked; a user or day as it is. */
function keyCell(r: UsageRow, link?: (key: string) => string): Array<Node | string> {
  if (!r.key) return ["(API and CLI)"];
  if (!link) return [r.key];
  if (r.title === undefined) return [h("a", { href: link(r.key) }, r.key)];
  return [h("span", {}, h("a", { href: link(r.key) }, r.title ?? "(untitled)"), h("div", { class: "muted mono" }, r.key))];
}

function table(rows: UsageRow[], keyLabel: string, link?: (key: string) => string): HTMLElement {
  if (rows.length === 0) return h("p", { class: "muted" }, "Nothing used yet.");
  return h(
    "table",
    { class: "usage" },
    h("thead", {}, h("tr", {}, ...[keyLabel, "Turns", "Input tokens", "Output tokens"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      ...rows.map((r) =>
        h(
          "tr",
          {},
          h("td", { "data-label": keyLabel, class: r.title === undefined ? "mono" : "" }, ...keyCell(r, link)),
          h("td", { "data-label": "Turns", class: "num" }, num(r.turns)),
          h("td", { "data-label": "Input", class: "num" }, num(r.input_tokens)),
          h("td", { "data-label": "Output", class: "num" }, num(r.output_tokens)),
        ),
      ),
    ),
  );
}

/** Tokens per day as a chart; per session and per platform user as tables. */
export async function usageView(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const get = (group: string) => json<{ usage: UsageRow[] }>("GET", `/v1/usage?group=${group}`, undefined, signal).then((r) => r.usage);
  const [days, sessions, users] = await Promise.all([get("day"), get("session"), get("user")]);
  replace(
    root,
    h("h1", {}, "Usage"),
    h("section", { class: "panel", "aria-labelledby": "days-title" }, h("h2", { id: "days-title" }, "Tokens per day"), dayChart(days)),
    h(
      "section",
      { class: "panel", "aria-labelledby": "sessions-title" },
      h("h2", { id: "sessions-title" }, "Per session"),
      table(sessions, "Session", (k) => `#/sessions/${encodeURIComponent(k)}`),
    ),
    h("section", { class: "panel", "aria-labelledby": "users-title" }, h("h2", { id: "users-title" }, "Per platform user"), table(users, "User")),
  );
}
