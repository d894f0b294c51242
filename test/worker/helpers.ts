import { parseSse, type SseEvent } from "../../workers/agent/index.ts";
import { selfFetch } from "./config.ts";

export const TOKEN = "test-token";

/** Calls the Worker under test. */
export function call(path: string, init: RequestInit & { json?: unknown; token?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? TOKEN : init.token;
  if (token !== null) headers.set("authorization", `Bearer ${token}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  return selfFetch(`http://edge.test${path}`, { ...init, headers, body: body ?? null });
}

/** A body read as UTF-8 from its bytes: workerd warns on .text() of a type it does not know as text (an export's x-ndjson). */
export async function bodyText(res: Response): Promise<string> {
  return new TextDecoder().decode(await res.arrayBuffer());
}

export async function newSession(title?: string): Promise<string> {
  const res = await call("/v1/sessions", { method: "POST", json: title ? { title } : {} });
  if (res.status !== 201) throw new Error(`create session: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { session: { id: string } }).session.id;
}

/** Starts a turn and returns its raw response. */
export function postTurn(id: string, content: string): Promise<Response> {
  return call(`/v1/sessions/${id}/turns`, { method: "POST", json: { content } });
}

/** All events of a turn stream. */
export async function readEvents(res: Response): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const ev of parseSse(res.body!)) out.push(ev);
  return out;
}

export function deltas(events: SseEvent[]): string {
  return events
    .filter((e) => e.event === "delta")
    .map((e) => (JSON.parse(e.data) as { text: string }).text)
    .join("");
}

export async function messages(id: string): Promise<Array<{ role: string; content: string | null; finish_reason: string | null }>> {
  const res = await call(`/v1/sessions/${id}/messages`);
  return ((await res.json()) as { messages: Array<{ role: string; content: string | null; finish_reason: string | null }> }).messages;
}

export async function session(id: string): Promise<{ running: boolean; title: string | null; message_count: number }> {
  const res = await call(`/v1/sessions/${id}`);
  return ((await res.json()) as { session: { running: boolean; title: string | null; message_count: number } }).session;
}

/** A turn being read event by event. */
export interface OpenTurn {
  res: Response;
  /** The next event, or null at the end of the stream. */
  next(): Promise<SseEvent | null>;
  /** Everything left, to the end. */
  rest(): Promise<SseEvent[]>;
}

export async function openTurn(id: string, content: string): Promise<OpenTurn> {
  const res = await postTurn(id, content);
  if (res.status !== 200) throw new Error(`turn: ${res.status} ${await res.text()}`);
  const it = parseSse(res.body!);
  return {
    res,
    async next() {
      const r = await it.next();
      return r.done ? null : r.value;
    },
    async rest() {
      const out: SseEvent[] = [];
      for (;;) {
        const r = await it.next();
        if (r.done) return out;
        out.push(r.value);
      }
    },
  };
}
