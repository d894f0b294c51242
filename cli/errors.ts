/** A failure to show the user in one line, with the exit code to leave with. */
export class CliError extends Error {
  override readonly name: string = "CliError";
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** The API said no: keeps the status and code for callers that handle some of them. */
export class ApiRefusal extends CliError {
  override readonly name = "ApiRefusal";
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
