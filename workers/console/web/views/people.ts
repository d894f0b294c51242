import { json } from "../api.ts";
import { h, replace, time } from "../dom.ts";
import type { Person, PersonAccount } from "../types.ts";
import { badge } from "./badges.ts";

function accountLabel(a: PersonAccount): string {
  return a.platform === "cli" ? "the operator's CLI" : `${a.platform} user ${a.user_id}`;
}

/** One person: their accounts, with what this Worker's settings say of each now. */
function personRow(p: Person): HTMLElement {
  return h(
    "li",
    { class: "person", "data-person": p.id },
    h("strong", {}, p.id),
    h(
      "ul",
      {},
      ...p.accounts.map((a) =>
        h(
          "li",
          {},
          accountLabel(a),
          " ",
          a.platform === "cli" ? null : a.allowed ? null : badge("not allowed", "bad"),
          a.admin ? badge("admin", "ok") : null,
          " ",
          h("span", { class: "muted" }, "linked ", time(a.linked_at)),
        ),
      ),
    ),
  );
}

/** Each person with their linked accounts (`/link` in a chat, `hermes-edge link`). */
export async function peopleView(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const { people } = await json<{ people: Person[] }>("GET", "/v1/people", undefined, signal);
  replace(
    root,
    h("h1", {}, "People"),
    h(
      "section",
      { class: "panel", "aria-labelledby": "people-title" },
      h("h2", { id: "people-title" }, "Linked accounts"),
      people.length === 0
        ? h("p", { class: "muted" }, "Nobody has linked accounts yet: /link in a DM with the bot gives a code to use on another platform.")
        : h("ul", { class: "people" }, ...people.map(personRow)),
      h("p", { class: "muted" }, "A person's accounts share one daily allowance and see each other's sessions in /resume; admin rights stay per account."),
    ),
  );
}
