import { json, sessionPath } from "../api.ts";
import { h, notice, num, replace, time } from "../dom.ts";
import type { Person, Platform, Session, Transcript } from "../types.ts";
import { stateBadges } from "./badges.ts";
import { chatView, nearEnd, stickToEnd } from "./chat.ts";
import { handoffView } from "./handoff.ts";
import { transcriptView } from "./transcript.ts";
import { errorMessage } from "../../../log/error.ts";

function meta(s: Session): HTMLElement {
  const items: Array<[string, string]> = [
    ["id", s.id],
    ["source", s.source],
    ["model", s.model ?? "—"],
    ["started", time(s.started_at)],
    ["last active", time(s.last_active_at)],
    ["messages", num(s.message_count)],
    ["tokens in / out", `${num(s.input_tokens)} / ${num(s.output_tokens)}`],
  ];
  return h("dl", { class: "meta" }, ...items.flatMap(([k, v]) => [h("dt", {}, k), h("dd", { class: k === "id" ? "mono" : "" }, v)]));
}

/**
 * Title and instructions, saved with PATCH. `show` puts a newer session's values (the title
 * a first turn gave it, say) into the fields the user has not started editing.
 */
function editForm(s: Session, saved: (s: Session) => void, signal: AbortSignal): { el: HTMLElement; show(s: Session): void } {
  const title = h("input", { id: "edit-title", name: "title", value: s.title ?? "", maxlength: 200 });
  const instructions = h("textarea", { id: "edit-instructions", name: "instructions", rows: 4, maxlength: 8000 }, s.instructions ?? "");
  const status = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "edit" },
    h("label", { for: "edit-title" }, "Title"),
    title,
    h("label", { for: "edit-instructions" }, "Instructions for this session (added to the agent's own)"),
    instructions,
    h("button", { type: "submit" }, "Save"),
    status,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    replace(status);
    json<{ session: Session }>("PATCH", sessionPath(s.id), { title: title.value.trim() || null, instructions: instructions.value.trim() || null }, signal)
      .then(({ session }) => {
        status.append(notice("Saved."));
        saved(session);
      })
      .catch((err: unknown) => status.append(notice(errorMessage(err), "error")));
  });
  const show = (next: Session) => {
    for (const [field, value] of [
      [title, next.title],
      [instructions, next.instructions],
    ] as const) {
      if (field.value === field.defaultValue) field.value = field.defaultValue = value ?? "";
    }
  };
  return { el: h("details", { class: "panel" }, h("summary", {}, "Edit title and instructions"), form), show };
}

/** Export links (plain GETs: the cookie goes along) and delete, behind a confirmation dialog. */
function dataActions(s: Session, signal: AbortSignal): HTMLElement {
  const confirm = h("button", { type: "button", class: "danger", value: "delete" }, "Delete for good");
  const cancel = h("button", { type: "button", class: "quiet" }, "Keep it");
  const dialog = h(
    "dialog",
    { "aria-labelledby": "delete-title" },
    h("h2", { id: "delete-title" }, "Delete this session?"),
    h("p", {}, "Its transcript, summary, routes and attachments are deleted everywhere. This cannot be undone; export it first to keep a copy."),
    h("div", { class: "actions" }, cancel, confirm),
  );
  cancel.addEventListener("click", () => dialog.close());
  confirm.addEventListener("click", () => {
    confirm.disabled = true;
    json("DELETE", sessionPath(s.id), undefined, signal)
      .then(() => {
        dialog.close();
        location.hash = "#/";
      })
      .catch((err: unknown) => dialog.append(notice(errorMessage(err), "error")))
      .finally(() => (confirm.disabled = false));
  });
  const del = h("button", { type: "button", class: "danger" }, "Delete…");
  del.addEventListener("click", () => {
    dialog.showModal();
    cancel.focus();
  });
  return h(
    "div",
    { class: "actions data" },
    h("a", { class: "button quiet", href: sessionPath(s.id, "/export?format=md"), download: `${s.id}.md` }, "Export Markdown"),
    h("a", { class: "button quiet", href: sessionPath(s.id, "/export?format=jsonl"), download: `${s.id}.jsonl` }, "Export JSONL"),
    del,
    dialog,
  );
}

/** One session: what it is, its transcript, the chat, handoff, edits, export and delete. */
export async function sessionView(root: HTMLElement, signal: AbortSignal, id: string): Promise<void> {
  const [{ session }, transcript, { platforms }, { people }] = await Promise.all([
    json<{ session: Session }>("GET", sessionPath(id), undefined, signal),
    json<Transcript>("GET", sessionPath(id, "/messages"), undefined, signal),
    json<{ platforms: Platform[] }>("GET", "/v1/platforms", undefined, signal),
    json<{ people: Person[] }>("GET", "/v1/people", undefined, signal),
  ]);
  const heading = h("h1", {}, session.title ?? "(untitled)");
  const badges = h("div", {}, stateBadges(session));
  const facts = h("div", {}, meta(session));
  const empty = h("p", { class: "muted empty", hidden: transcript.messages.length > 0 }, "Nothing said yet.");
  // Its own scrolling pane, so the composer below it stays in view however long the talk.
  const list = h("div", { class: "transcript", "aria-label": "Transcript", role: "log", tabindex: 0 }, ...transcriptView(transcript));
  let edit: { el: HTMLElement; show(s: Session): void } | null = null;
  const describe = (s: Session) => {
    heading.textContent = s.title ?? "(untitled)";
    replace(badges, stateBadges(s));
    replace(facts, meta(s));
    edit?.show(s);
  };
  edit = editForm(session, describe, signal);
  const chat = chatView({
    sessionId: id,
    transcript: list,
    signal,
    busy: (running) => {
      if (running) empty.hidden = true;
      replace(badges, stateBadges({ ...session, running }));
    },
    reload: async () => {
      const [t, s] = await Promise.all([
        json<Transcript>("GET", sessionPath(id, "/messages"), undefined, signal),
        json<{ session: Session }>("GET", sessionPath(id), undefined, signal),
      ]);
      const follow = nearEnd(list);
      replace(list, ...transcriptView(t));
      stickToEnd(list, follow);
      empty.hidden = t.messages.length > 0;
      Object.assign(session, s.session);
      describe(session);
    },
  });
  replace(
    root,
    h("p", { class: "crumbs" }, h("a", { href: "#/" }, "← Sessions")),
    h("div", { class: "title-row" }, heading, badges),
    facts,
    dataActions(session, signal),
    edit.el,
    handoffView(id, session.handoff, platforms, people, signal),
    h("section", { class: "panel", "aria-labelledby": "transcript-title" }, h("h2", { id: "transcript-title" }, "Transcript"), empty, list, chat),
  );
  stickToEnd(list, true);
  heading.tabIndex = -1;
  heading.focus();
}
