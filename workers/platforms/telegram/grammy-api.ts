/** What the adapter uses of grammY, loaded through ./grammy.ts (re-exported here so the bundle keeps only these). */
export { Api, GrammyError, HttpError } from "grammy";
