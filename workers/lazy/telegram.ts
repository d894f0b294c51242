// What workers/lazy/telegram.js holds (built from this file by workers/lazy/build.mjs):
// grammY's Bot API client and its errors, loaded when the Telegram adapter first calls
// Telegram, not when a webhook arrives.
export { Api, GrammyError, HttpError } from "grammy";
