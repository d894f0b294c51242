import { parseSse } from "../../agent/sse.ts";

/** An answer of the API other than 2xx: its status and the stable error code. */
export class ApiFailure extends Error {
  override readonly name = "ApiFailure";
  readonly status: number;
  readonly code: string;
  readonly retryAfter: number | null;

  constructor(status: number, code: string, message: string, retryAfter: number | null = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** Called when the API says the console is not signed in (the cookie expired, API_TOKEN rotated). */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(fn: () => void): void {
  onSignedOut = fn;
}

async function failure(res: Response): Promise<ApiFailure> {
  let code = "http_error";
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {
    // not JSON
  }
  const retry = Number(res.headers.get("retry-after"));
  return new ApiFailure(res.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : null);
}

/** Where this tab keeps the per-tab key its sign-in returned (sessionStorage: this tab, this origin). */
const TAB_KEY = "hermes-console-tab";
/** The header the key goes in (workers/console/cookie.ts TAB_HEADER). */
const TAB_HEADER = "x-hermes-console-tab";

function storedTabKey(): string | null {
  try {
    return sessionStorage.getItem(TAB_KEY);
  } catch {
    return null;
  }
}

/**
 * Signs in with the API token: the Worker sets the cookie and returns this tab's key, kept
 * in sessionStorage and sent with every request (the cookie alone is refused: cookies are
 * not port-scoped, so on loopback other local servers receive it too).
 */
export async function signIn(token: string): Promise<void> {
  const answer = (await (await request("POST", "/console/sign-in", { token })).json()) as { tab_key?: string };
  if (answer.tab_key) sessionStorage.setItem(TAB_KEY, answer.tab_key);
}

/** Forgets this tab's key (signing out). */
export function forgetTab(): void {
  try {
    sessionStorage.removeItem(TAB_KEY);
  } catch {
    // storage unavailable: nothing kept
  }
}

/**
 * A request to this origin (the session cookie and this tab's key go along). JSON bodies
 * are sent as JSON; a 401 anywhere but sign-in means the session is over.
 */
export async function request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  const tab = storedTabKey();
  const init: RequestInit = { method, credentials: "same-origin", headers: { accept: "application/json", ...(tab ? { [TAB_HEADER]: tab } : {}) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  if (body !== undefined) init.headers = { ...init.headers, "content-type": "application/json" };
  if (signal) init.signal = signal;
  const res = await fetch(path, init);
  if (res.ok) return res;
  const err = await failure(res);
  if (res.status === 401 && !path.startsWith("/console/")) onSignedOut();
  throw err;
}

/** `request` and its JSON answer. */
export async function json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  return (await (await request(method, path, body, signal)).json()) as T;
}

/** One event of a streamed turn. */
export type TurnEvent =
  | { type: "delta"; text: string }
  | { type: "tool"; name: string; status: "start" | "end"; summary?: string }
  | { type: "done"; finish_reason: string }
  | { type: "error"; code: string; message: string };

/** Starts a turn and yields its server-sent events as they arrive. */
export async function* turn(sessionId: string, content: string, signal?: AbortSignal): AsyncGenerator<TurnEvent> {
  const res = await request("POST", `/v1/sessions/${encodeURIComponent(sessionId)}/turns`, { content }, signal);
  if (!res.body) return;
  for await (const ev of parseSse(res.body)) {
    const data = JSON.parse(ev.data) as Record<string, unknown>;
    if (ev.event === "delta" || ev.event === "tool" || ev.event === "done" || ev.event === "error") yield { type: ev.event, ...data } as TurnEvent;
  }
}

/** `/v1/sessions/<id>…` with the id escaped. */
export function sessionPath(id: string, rest = ""): string {
  return `/v1/sessions/${encodeURIComponent(id)}${rest}`;
}
