import { createLogger, type Logger } from "./logger.ts";

export { errorChain, errorMessage } from "./error.ts";
export { createLogger, formatLine, logLines, textSink, type Logger, type LogRecord } from "./logger.ts";
export { REDACTED, redactText } from "./redact.ts";

/**
 * The Worker's root logger, writing to the console: components take a child,
 * `logger.child(\`inbox ${key}\`).error("handing on failed; retrying", { err })`.
 */
export const logger: Logger = createLogger();
