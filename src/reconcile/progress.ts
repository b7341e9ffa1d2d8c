/** How far a round's transfer is: told to a push's or a pull's progress line (lifecycle/progress.ts). */

export interface Tally {
  files: number;
  bytes: number;
}

export type Direction = "pushing" | "pulling";

export type TransferProgress = (what: Direction, done: Tally, total: Tally) => void;
