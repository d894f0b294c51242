import { forgetTab, json, request, signIn, whenSignedOut } from "./api.ts";
import { h, replace } from "./dom.ts";
import { peopleView } from "./views/people.ts";
import { platformsView } from "./views/platforms.ts";
import { sessionView } from "./views/session.ts";
import { sessionsView } from "./views/sessions.ts";
import { signInView, takeTokenFromFragment } from "./views/signin.ts";
import { usageView } from "./views/usage.ts";
import { errorMessage } from "../../log/error.ts";

/** A page of the console: draws into `root`; `signal` aborts when the page is left. */
export type View = (root: HTMLElement, signal: AbortSignal, param: string) => Promise<void> | void;

/** The first route whose pattern matches `hash`, with its match. */
function matchRoute(hash: string): { m: RegExpExecArray; view: View; title: string } | undefined {
  for (const [re, view, title] of ROUTES) {
    const m = re.exec(hash);
    if (m) return { m, view, title };
  }
  return undefined;
}

const ROUTES: Array<[RegExp, View, string]> = [
  [/^#?\/?$/, sessionsView, "Sessions"],
  [/^#\/sessions\/([^/]+)$/, sessionView, "Session"],
  [/^#\/platforms$/, platformsView, "Platforms"],
  [/^#\/usage$/, usageView, "Usage"],
  [/^#\/people$/, peopleView, "People"],
];

const main = h("main", { id: "main", tabindex: "-1" });
const nav = h(
  "nav",
  { "aria-label": "Console" },
  h("a", { href: "#/" }, "Sessions"),
  h("a", { href: "#/platforms" }, "Platforms"),
  h("a", { href: "#/usage" }, "Usage"),
  h("a", { href: "#/people" }, "People"),
);
const signOut = h("button", { type: "button", class: "quiet", id: "sign-out", onclick: () => void leave() }, "Sign out");
const header = h("header", { class: "bar" }, h("a", { class: "brand", href: "#/" }, "hermes-edge"), nav, signOut);

let current: AbortController | null = null;
let signedIn = false;
/** Said on the sign-in form once (a refused sign-in link). */
let note: string | null = null;

/** Draws the page the fragment names, leaving the one before (its requests cancelled). */
async function route(): Promise<void> {
  current?.abort();
  const controller = (current = new AbortController());
  if (!signedIn) {
    nav.hidden = signOut.hidden = true;
    document.title = "Sign in · hermes-edge";
    const said = note;
    note = null;
    return signInView(main, said, async () => {
      signedIn = true;
      await route();
    });
  }
  nav.hidden = signOut.hidden = false;
  const hash = location.hash;
  const found = matchRoute(hash);
  for (const a of nav.querySelectorAll("a"))
    a.toggleAttribute("aria-current", a.getAttribute("href") === (hash.startsWith("#/sessions/") ? "#/" : hash || "#/"));
  if (!found) {
    replace(main, h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the sessions")));
    return;
  }
  document.title = `${found.title} · hermes-edge`;
  replace(main);
  try {
    await found.view(main, controller.signal, decodeURIComponent(found.m[1] ?? ""));
  } catch (err) {
    if (controller.signal.aborted) return;
    main.append(h("p", { class: "notice error", role: "alert" }, errorMessage(err)));
  }
}

async function leave(): Promise<void> {
  await request("POST", "/console/sign-out").catch(() => undefined);
  forgetTab();
  signedIn = false;
  await route();
}

/**
 * A local sign-in link (`npm start`) carries the token in the fragment: it is taken out of
 * the address bar first, then exchanged for the cookie. Null when the fragment has none.
 */
async function linkSignIn(): Promise<boolean | null> {
  const token = takeTokenFromFragment();
  if (token === null) return null;
  return signIn(token).then(
    () => true,
    (err: unknown) => ((note = `The sign-in link was refused: ${errorMessage(err)}`), false),
  );
}

async function boot(): Promise<void> {
  document.body.append(header, main);
  whenSignedOut(() => {
    if (!signedIn) return;
    signedIn = false;
    void route();
  });
  signedIn = (await linkSignIn()) ?? (await json<{ signed_in: boolean }>("GET", "/console/session")).signed_in;
  window.addEventListener("hashchange", () => {
    void linkSignIn().then((ok) => {
      if (ok !== null) signedIn = ok;
      return route();
    });
  });
  await route();
}

void boot();
