/**
 * The guard on `uspark push --delete`: a delete of most of the remote project is far more often
 * a mistake (a wrong --root or --prefix, a half-checked-out tree) than an intent. More than
 * `share` of the remote's files, and more than `minFiles` files, is refused without --force.
 */
export const MASS_DELETE = { share: 0.5, minFiles: 10 } as const;

/** "50% and 10 files", for messages and help. */
export const MASS_DELETE_TEXT = `${MASS_DELETE.share * 100}% (and more than ${MASS_DELETE.minFiles} files)`;

export function isMassDelete(deletes: number, remoteFiles: number): boolean {
  return deletes > MASS_DELETE.minFiles && deletes > remoteFiles * MASS_DELETE.share;
}
