import { ApiFailure, json, sessionPath, turn } from "../api.ts";
import { h, notice, replace } from "../dom.ts";
import { renderMarkdown } from "../markdown.ts";
import { errorMessage } from "../../../log/error.ts";

/** What the chat needs from the session page around it. */
export interface ChatHost {
  sessionId: string;
  /** Where the live user message and reply are shown. */
  transcript: HTMLElement;
  /** Reloads the stored transcript (after a turn ends). */
  reload(): Promise<void>;
  /** A turn started or ended (the page disables what a running turn forbids). */
  busy(running: boolean): void;
  signal: AbortSignal;
}

/** Whether a scrolling pane shows its last few lines (the reader is following along). */
export function nearEnd(pane: HTMLElement): boolean {
  return pane.scrollHeight - pane.scrollTop - pane.clientHeight < 48;
}

/** Keeps the transcript pane on its newest message, unless the reader scrolled up (`follow` false). */
export function stickToEnd(pane: HTMLElement, follow: boolean): void {
  if (follow) pane.scrollTop = pane.scrollHeight;
}

/**
 * The composer: sends a message as a turn and draws the reply as it streams in; Stop
 * interrupts the turn (the partial reply is kept, marked interrupted). Ctrl/⌘+Enter sends.
 */
export function chatView(host: ChatHost): HTMLElement {
  const input = h("textarea", { id: "message", name: "message", rows: 3, placeholder: "Message the agent (Ctrl+Enter to send)", required: true });
  const send = h("button", { type: "submit" }, "Send");
  const stop = h("button", { type: "button", class: "danger", disabled: true }, "Stop");
  const status = h("div", { class: "chat-status", "aria-live": "polite" });

  const run = async (content: string) => {
    replace(status);
    send.disabled = true;
    stop.disabled = false;
    host.busy(true);
    const reply = h("div", { class: "md" });
    const tools = h("ul", { class: "tool-events" });
    const live = h(
      "article",
      { class: "msg assistant streaming", "aria-busy": "true" },
      h("header", {}, h("span", { class: "role" }, "Agent"), h("span", { class: "badge live" }, "replying…")),
      tools,
      reply,
    );
    const mine = h("div", { class: "md" });
    mine.innerHTML = renderMarkdown(content);
    host.transcript.append(h("article", { class: "msg user pending" }, h("header", {}, h("span", { class: "role" }, "User")), mine), live);
    stickToEnd(host.transcript, true);
    let text = "";
    let frame = 0;
    const draw = () => {
      frame = 0;
      const atEnd = nearEnd(host.transcript);
      reply.innerHTML = renderMarkdown(text);
      stickToEnd(host.transcript, atEnd);
    };
    try {
      for await (const ev of turn(host.sessionId, content, host.signal)) {
        if (ev.type === "delta") {
          text += ev.text;
          frame ||= requestAnimationFrame(draw);
        } else if (ev.type === "tool") {
          tools.append(h("li", {}, `${ev.status === "start" ? "Running" : "Finished"} tool ${ev.name}${ev.summary ? `: ${ev.summary}` : ""}`));
        } else if (ev.type === "done") {
          status.append(notice(ev.finish_reason === "interrupted" ? "Stopped: the partial reply is kept." : "Reply complete."));
        } else {
          status.append(notice(`The turn failed: ${ev.message}`, "error"));
        }
      }
      cancelAnimationFrame(frame);
      draw();
    } catch (err) {
      if (host.signal.aborted) return;
      const busy = err instanceof ApiFailure && err.code === "turn_in_progress";
      status.append(notice(busy ? "A turn is already running in this session; wait for it or press Stop." : `Could not send: ${errorMessage(err)}`, "error"));
    } finally {
      if (!host.signal.aborted) {
        stop.disabled = true;
        // Send again only once the stored transcript replaced the live one: a message sent
        // before would be drawn into the list the reload then wipes.
        await host.reload().catch(() => undefined);
        send.disabled = false;
        host.busy(false);
      }
    }
  };

  stop.addEventListener("click", () => {
    stop.disabled = true;
    json<{ interrupted: boolean }>("POST", sessionPath(host.sessionId, "/interrupt")).catch((err: unknown) =>
      status.append(notice(`Stop failed: ${errorMessage(err)}`, "error")),
    );
  });
  const form = h(
    "form",
    { class: "composer", "aria-label": "Send a message" },
    h("label", { for: "message", class: "visually-hidden" }, "Message"),
    input,
    h("div", { class: "actions" }, send, stop),
    status,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const content = input.value;
    if (!content.trim() || send.disabled) return;
    input.value = "";
    void run(content);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  return form;
}
