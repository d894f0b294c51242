import { ApiFailure, signIn } from "../api.ts";
import { h, notice, replace } from "../dom.ts";
import { errorMessage } from "../../../log/error.ts";

/**
 * The token of a local sign-in link (`#token=…`, printed by `npm start`), removed from the
 * address bar and history at once so it is neither bookmarked nor left on screen; null
 * when the fragment carries none.
 */
export function takeTokenFromFragment(): string | null {
  const encoded = /^#token=([^&]+)/.exec(location.hash)?.[1];
  if (encoded === undefined) return null;
  history.replaceState(null, "", `${location.pathname}${location.search}#/`);
  try {
    return decodeURIComponent(encoded);
  } catch {
    return null;
  }
}

function reason(err: unknown): string {
  if (err instanceof ApiFailure && err.code === "unauthorized") return "That is not this Worker's API token.";
  if (err instanceof ApiFailure && err.code === "too_many_attempts") return `Too many failed sign-ins from here. Try again in ${err.retryAfter ?? "a few"} s.`;
  return errorMessage(err);
}

/** The sign-in form: the API_TOKEN, exchanged for the console's session cookie. */
export function signInView(root: HTMLElement, said: string | null, signedIn: () => Promise<void>): void {
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "current-password", required: true, spellcheck: "false" });
  const status = h("div", { class: "form-status", "aria-live": "polite" });
  if (said) status.append(notice(said, "error"));
  const button = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    { class: "sign-in", method: "post", action: "/console/sign-in" },
    h("h1", {}, "hermes-edge console"),
    h("p", { class: "muted" }, "Sign in with the Worker's API token (API_TOKEN: .dev.vars locally, a Worker secret when deployed)."),
    h("label", { for: "token" }, "API token"),
    input,
    button,
    status,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    button.disabled = true;
    replace(status);
    signIn(input.value)
      .then(() => {
        input.value = "";
        return signedIn();
      })
      .catch((err: unknown) => {
        status.append(notice(reason(err), "error"));
        input.select();
      })
      .finally(() => (button.disabled = false));
  });
  replace(root, form);
  input.focus();
}
