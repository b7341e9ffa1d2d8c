import { createRequire } from "node:module";

/**
 * Loads a CommonJS dependency (commander, ignore, picocolors) with require(): that takes a
 * fraction of the time the ESM loader needs for it (it also runs a lexer over the module to
 * find its named exports), and start-up is on the clock before the first output byte.
 */
export const requireCjs = createRequire(import.meta.url);
