import type { Conversation } from "./chats.ts";
import { answerOf, Timeout, transcript, until, type Tally, type WorkerClient } from "./harness.ts";
import { all, quiet, untilPosted } from "./telegram-dm.ts";

/** One message of a chat and the model's whole answer to it. */
export interface Exchange {
  text: string;
  expected: string;
}

/**
 * Checks a conversation at the edge: each message answered once, in full (`expected`: the
 * model's whole answer), each answer shown once as the transcript has it
 * (`GET /v1/sessions/:id/messages`; compared as the words a user reads, the platform's
 * rendering undone), nothing else posted. Counts into `tally`; answers
 * shown out of order are noted in its info.
 */
export async function checkChat(api: WorkerClient, conv: Conversation, tally: Tally, exchanges: readonly Exchange[], waitMs: number): Promise<void> {
  const { view, chat } = conv;
  const where = `${conv.platform} ${chat}`;
  tally.cases += exchanges.length;
  try {
    await all(
      waitMs,
      "every answer shown",
      exchanges.map((x) => untilPosted(view, chat, x.expected, waitMs)),
    );
  } catch (err) {
    if (!(err instanceof Timeout)) throw err;
  }
  let messages;
  try {
    const session = await conv.session();
    await until(
      30_000,
      `session ${session.id} idle`,
      async () => ((await api.json<{ session: { running: boolean } }>(`/v1/sessions/${session.id}`)).session.running ? undefined : true),
      250,
    );
    await quiet(view);
    messages = await transcript(api, session.id);
  } catch (err) {
    if (!(err instanceof Timeout)) throw err;
    tally.add("lost", `${where}: ${err.message}`);
    return;
  }
  const shown = view.messages(chat).map((m) => m.plain);
  const said = JSON.stringify(shown.map((t) => t.slice(0, 40)));
  for (const x of exchanges) {
    const { stored, replies } = answerOf(messages, x.text);
    const reply = replies.at(-1);
    if (!reply || reply.finish_reason === "error") {
      tally.add(
        "lost",
        `${where}: "${x.text}": ${reply ? `the transcript ends with a failure (${reply.content?.slice(0, 60)})` : "no reply in the transcript"}; shown ${said}`,
      );
      continue;
    }
    if (stored > 1 || replies.length > 1) tally.add("doubled", `${where}: "${x.text}" stored ${stored}×, ${replies.length} replies in the transcript`);
    const times = shown.filter((t) => t === reply.content?.trim()).length;
    if (times > 1) tally.add("doubled", `${where}: "${x.text}": its answer posted ${times}×`);
    if (reply.content !== x.expected)
      tally.add(
        "truncated",
        `${where}: the transcript's reply to "${x.text}" is ${JSON.stringify(reply.content?.slice(0, 80))}, the model said ${JSON.stringify(x.expected)}`,
      );
    else if (times === 0) tally.add("truncated", `${where}: the answer to "${x.text}" never showed in full; shown ${said}`);
  }
  const expected = exchanges.map((x) => x.expected.trim());
  const extra = shown.filter((t) => !expected.includes(t));
  if (extra.length > 0) tally.add("doubled", `${where}: posted besides the answers: ${JSON.stringify(extra.map((t) => t.slice(0, 40)))}`);
  const order = shown.filter((t) => expected.includes(t));
  if (new Set(order).size === order.length && order.join("\n") !== expected.filter((t) => order.includes(t)).join("\n"))
    tally.info.push(`${where}: answers shown out of order: ${said}`);
}
