// What workers/lazy/pdf.js holds (built from this file by workers/lazy/build.mjs): pdf.js,
// through unpdf's build for serverless runtimes.
export { getDocumentProxy } from "unpdf";
