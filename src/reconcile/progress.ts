/** How far a round's transfer is: told to a push's or a pull's progress line (terminal/progress.ts). */

export interface Tally {
  files: number;
  bytes: number;
}

/** Reading: hashing the local files a round looks at, before it knows what to send. */
export type Direction = "reading" | "pushing" | "pulling";

export type TransferProgress = (what: Direction, done: Tally, total: Tally) => void;
