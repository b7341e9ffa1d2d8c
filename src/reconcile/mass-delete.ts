/**
 * The guard on deletes of most of a project (push --delete, pull --delete, a scan that finds most
 * of the last sync's files gone): far more often a mistake (a wrong --root, --prefix or project,
 * a volume not mounted, a half-checked-out tree, a remote that was emptied) than an intent. More
 * than `share` of the files, and more than `minFiles` files, is stopped and explained, never
 * carried out; `--force` (push, pull) says it is meant.
 */
export const MASS_DELETE = { share: 0.5, minFiles: 10 } as const;

/** "50% (and more than 10 files)", for messages and help. */
export const MASS_DELETE_TEXT = `${MASS_DELETE.share * 100}% (and more than ${MASS_DELETE.minFiles} files)`;

export function isMassDelete(deletes: number, ofFiles: number): boolean {
  return deletes > MASS_DELETE.minFiles && deletes > ofFiles * MASS_DELETE.share;
}
