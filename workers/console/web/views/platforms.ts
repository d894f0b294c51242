import { json } from "../api.ts";
import { h, num, replace } from "../dom.ts";
import { platformSteps } from "../steps.ts";
import type { Gateway, Platform, SettingProblem, WorkerPlace } from "../types.ts";
import { badge } from "./badges.ts";

function stepList(p: Platform, where: "local" | "deployed", origin: string): HTMLElement {
  return h(
    "ol",
    { class: "setup-steps", "data-where": where },
    ...platformSteps(p, where, origin).map((step) => h("li", {}, h("p", {}, step.text), step.code ? h("pre", { class: "command" }, step.code) : null)),
  );
}

function platformCard(p: Platform, where: "local" | "deployed", origin: string): HTMLElement {
  const home = p.home_channel;
  const missing = p.missing ?? [];
  return h(
    "article",
    { class: "card", "data-platform": p.name },
    h("h2", {}, p.name, " ", p.enabled ? badge("enabled", "ok") : badge("not configured", "muted"), p.relay ? badge("relayed to a gateway", "live") : null),
    h(
      "dl",
      { class: "meta" },
      h("dt", {}, "home channel"),
      h(
        "dd",
        {},
        home
          ? `${home.chat_id}${home.thread_id ? ` · thread ${home.thread_id}` : ""} (${home.source})`
          : "none: send /sethome in the chat handoffs should go to",
      ),
    ),
    connectionRow(p),
    missing.length > 0 ? h("p", {}, "Missing settings: ", ...missing.flatMap((m, i) => [i > 0 ? ", " : "", h("code", {}, m)])) : null,
    stepList(p, where, origin),
  );
}

const when = (ms: number | null) => (ms === null ? "—" : new Date(ms).toLocaleString());

/** Discord's Gateway (DISCORD_GATEWAY=on): its state, connected since, last heartbeat ACK and latency, resumes, last close code; a stop with its fix. */
function connectionRow(p: Platform): HTMLElement | null {
  const c = p.connection;
  if (!c) return null;
  const state = c.state === "connected" ? badge("connected", "ok") : c.state === "stopped" ? badge("stopped", "bad") : badge("connecting", "muted");
  const facts = [
    ["connected since", when(c.connected_since)],
    ["last heartbeat ACK", c.last_ack_at === null ? "—" : `${when(c.last_ack_at)}${c.latency_ms !== null ? ` (${c.latency_ms} ms)` : ""}`],
    ["resumes", String(c.resumes)],
    ["last close code", c.last_close_code === null ? "—" : String(c.last_close_code)],
  ];
  return h(
    "section",
    { class: "connection", "data-connection": c.state },
    h("h3", {}, "Gateway ", state),
    h("dl", { class: "meta" }, ...facts.flatMap(([k, v]) => [h("dt", {}, k ?? ""), h("dd", {}, v ?? "")])),
    c.problem ? h("p", { class: "notice error" }, `${c.problem.problem}. Fix: ${c.problem.fix}`) : null,
  );
}

function gatewayTable(gateways: Gateway[]): HTMLElement {
  if (gateways.length === 0) return h("p", { class: "muted" }, "No relay gateway is configured (RELAY_SECRETS).");
  return h(
    "table",
    { class: "gateways" },
    h("thead", {}, h("tr", {}, ...["Gateway", "Connected", "Platforms", "Buffered", "Dropped"].map((t) => h("th", { scope: "col" }, t)))),
    h(
      "tbody",
      {},
      ...gateways.map((g) =>
        h(
          "tr",
          { "data-gateway": g.id },
          h("td", { "data-label": "Gateway", class: "mono" }, g.id),
          h("td", { "data-label": "Connected" }, g.connected ? badge("connected", "ok") : badge("away", "muted")),
          h("td", { "data-label": "Platforms" }, (g.platforms ?? []).join(", ") || "—"),
          h("td", { "data-label": "Buffered", class: "num" }, num(g.buffered ?? 0)),
          h("td", { "data-label": "Dropped", class: "num" }, num(g.dropped ?? 0)),
        ),
      ),
    ),
  );
}

/** The settings the Worker did not understand, each saying what it does instead and what to write. */
function settingProblems(problems: SettingProblem[]): HTMLElement | null {
  if (problems.length === 0) return null;
  return h(
    "section",
    { class: "panel", "aria-labelledby": "settings-title", "data-setting-problems": String(problems.length) },
    h("h2", { id: "settings-title" }, "Settings with problems"),
    h("ul", {}, ...problems.map((p) => h("li", { class: "notice error", "data-setting": p.setting }, p.message))),
  );
}

/** The settings with problems; each platform's state and what it still needs; each relay gateway's connection and buffer. */
export async function platformsView(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const [{ platforms, worker, setting_problems }, { gateways }] = await Promise.all([
    json<{ platforms: Platform[]; worker?: WorkerPlace; setting_problems?: SettingProblem[] }>("GET", "/v1/platforms", undefined, signal),
    json<{ gateways: Gateway[] }>("GET", "/v1/relay", undefined, signal),
  ]);
  const origin = worker?.origin ?? location.origin;
  const detected = worker?.local ? "local" : "deployed";
  const cards = h("div", { class: "cards" });
  const place = h(
    "select",
    { id: "where" },
    h("option", { value: "local", selected: detected === "local" }, "locally (npm start, npm run dev)"),
    h("option", { value: "deployed", selected: detected === "deployed" }, "deployed (wrangler deploy)"),
  );
  const show = () => replace(cards, ...platforms.map((p) => platformCard(p, place.value === "local" ? "local" : "deployed", origin)));
  place.addEventListener("change", show);
  show();
  replace(
    root,
    h("h1", {}, "Platforms"),
    h(
      "p",
      { class: "where" },
      h("label", { for: "where" }, "This Worker runs "),
      place,
      h("span", { class: "muted" }, ` (from its address, ${new URL(origin).host}: ${detected})`),
    ),
    settingProblems(setting_problems ?? []),
    cards,
    h("section", { class: "panel", "aria-labelledby": "relay-title" }, h("h2", { id: "relay-title" }, "Relay gateways"), gatewayTable(gateways)),
  );
}
