/** What push's and pull's help say of conflicts. */

export const CONFLICTS_HELP = `
Conflicts: a file changed here and remotely since the last sync (or, with no sync yet, a file that
differs on both sides and that git does not report clean) keeps both versions: the remote one stays
at its path, yours stays here and a command that writes (push, watch, run; never pull) commits
it next to it as <name>.conflict-<YYYYMMDD-HHMMSS>-<host>-<sha6>.<ext>; it is said once and the
exit code is 1. Resolve it with \`uspark resolve <path> --mine | --theirs | --both\`, which removes
the copy on every machine (or \`uspark push --force <path>\` / \`uspark pull --force <path>\`, which
leave the copy).`;
