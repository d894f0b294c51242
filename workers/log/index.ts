import { createLogger, type Logger } from "./logger.ts";

export { errorChain, errorMessage } from "./error.ts";
export {
  consoleSink,
  createLogger,
  formatLine,
  logLines,
  textSink,
  type LogFields,
  type Logger,
  type LogLevel,
  type LogRecord,
  type LogSink,
} from "./logger.ts";
export { REDACTED, redactError, redactText, redactValue } from "./redact.ts";

/**
 * The Worker's root logger, writing to the console: components take a child,
 * `logger.child(\`inbox ${key}\`).error("handing on failed; retrying", { err })`.
 */
export const logger: Logger = createLogger();
