import { isEventId, isRoomId } from "./ids.ts";

/** A matrix.to link to a room, or to a thread's root event in it (any client opens it). */
export function matrixLink(chatId: string, threadId: string | null): string | null {
  if (!isRoomId(chatId)) return null;
  const room = `https://matrix.to/#/${encodeURIComponent(chatId)}`;
  return threadId && isEventId(threadId) ? `${room}/${encodeURIComponent(threadId)}` : room;
}
