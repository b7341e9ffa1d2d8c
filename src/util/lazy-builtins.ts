/**
 * Node built-ins that a command may never need, loaded where first used instead of by a static
 * import that every start pays for (`uspark --version`, `--help`, a usage error, a dry run):
 * node:crypto alone brings some twenty internal modules with it. process.getBuiltinModule
 * (Node >= 20.16) loads one synchronously, once.
 */
export const nodeCrypto = (): typeof import("node:crypto") => process.getBuiltinModule("node:crypto");
