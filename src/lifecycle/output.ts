/** stdout for the commands whose answer is data (status, diff, log, ls, cat): resolved once taken, so exit() loses none of it. */
export function writeStdout(data: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    // A closed pipe (`uspark log | head`) is the reader's choice, not a failure: the guard in report.ts says the rest.
    process.stdout.write(data, () => resolve());
  });
}
