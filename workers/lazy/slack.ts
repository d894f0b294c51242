// What workers/lazy/slack.js holds (built from this file by workers/lazy/build.mjs): Slack's
// Web API client, with its Node built-ins (zlib, streams, fs, os) and queues: loaded when a
// Slack call is first made, not when a webhook arrives.
export { ErrorCode, WebClient } from "@slack/web-api";
