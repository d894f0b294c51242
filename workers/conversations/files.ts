/** Where a session's attachments are kept in the `FILES` bucket: everything under one prefix, so a session's files go with it. */
export function sessionFilesPrefix(sessionId: string): string {
  return `sessions/${sessionId}/`;
}
