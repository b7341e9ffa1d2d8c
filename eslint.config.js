// `npm run lint` (with prettier --check): the limits of docs/development.md and the layer order of
// src/, so that a change that breaks them goes red. Formatting is prettier's alone; no style rule here.
import { readdirSync } from "node:fs";
import path from "node:path";
import tsParser from "@typescript-eslint/parser";

/**
 * The floors of src/, bottom up: a folder imports only folders on a floor below its own (never a
 * neighbour on its floor, never one above). On top, the commands (cli.ts, commands/) and the
 * library's index.ts, which may import anything. The server is the client's neighbour, never its
 * dependency: only the commands may import it.
 */
const FLOORS = [
  // errors/: the one error base and the helpers that read a caught value; they import nothing.
  ["errors"],
  ["util"],
  ["text", "ignore", "stream", "api", "report", "state"],
  // docs/: the generated tables of docs/ (scripts/docs.mjs), from the lists of api/ and report/.
  ["agents", "paths", "docs"],
  ["config"],
  ["fswatch", "transfer", "server"],
  ["reconcile", "transcript"],
  // terminal/: what a command shows on a terminal.
  ["sync", "terminal"],
  ["watcher"],
  ["lifecycle"],
];
const TOP = ["commands", "cli.js", "index.js"];
const ONLY_FROM_TOP = ["server"];

// Every folder of src/ has its floor (a new one fails the lint until it is given one), and the top
// of src/ holds only the entry and the index.
const entries = readdirSync(path.join(import.meta.dirname, "src"), { withFileTypes: true });
const unplaced = entries.filter((entry) => entry.isDirectory() && !FLOORS.flat().includes(entry.name) && !TOP.includes(entry.name));
const loose = entries.filter((entry) => entry.isFile() && !["cli.ts", "index.ts"].includes(entry.name));
if (unplaced.length > 0 || loose.length > 0) {
  const names = [
    ...unplaced.map((entry) => `src/${entry.name}/ has no floor in FLOORS`),
    ...loose.map((entry) => `src/${entry.name} belongs in a folder`),
  ];
  throw new Error(`eslint.config.js: ${names.join("; ")}`);
}

/** What `folder` may not import: its floor and those above, the server, the top. */
function forbiddenFor(folder) {
  const floor = FLOORS.findIndex((names) => names.includes(folder));
  const above = FLOORS.slice(floor)
    .flat()
    .filter((name) => name !== folder);
  return [...new Set([...above, ...ONLY_FROM_TOP.filter((name) => name !== folder), ...TOP])];
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const MAX_DEPTH = 4; // src/server/web/pages/x.ts is 3 folders deep

/**
 * One entry a folder and depth: a specifier is matched as written, so `../transfer/` is src/transfer/
 * only from a file one folder deep, `../../transfer/` from two deep. Static imports, re-exports and
 * import() alike.
 */
function layerRules() {
  return FLOORS.flat().flatMap((folder) =>
    Array.from({ length: MAX_DEPTH }, (_, index) => {
      const depth = index + 1;
      const names = forbiddenFor(folder).map((name) => (name.endsWith(".js") ? escape(name) + "$" : `${escape(name)}/`));
      const regex = `^(\\.\\./){${depth}}(${names.join("|")})`;
      const message = `src/${folder}/ may not import this: the layer order of eslint.config.js (a folder imports only folders on a floor below its own).`;
      return {
        files: [`src/${folder}/${"*/".repeat(depth - 1)}*.ts`],
        rules: {
          "no-restricted-imports": ["error", { patterns: [{ regex, message }] }],
          "no-restricted-syntax": [
            "error",
            { selector: `ImportExpression > Literal.source[value=/${regex.replace(/\//g, "\\/")}/]`, message },
          ],
        },
      };
    }),
  );
}

/**
 * Lines that count: code, not blank lines or comments. The limits are there so that a module and a
 * function can be checked by eye; a comment that says why helps that, and counting it would make
 * deleting it the cheapest way under a limit.
 */
const CODE_LINES = { skipBlankLines: true, skipComments: true };

export default [
  { ignores: ["dist/", "coverage/", "artifacts/", ".tsbuild/", ".vitest-cache/", "**/fixtures/", "node_modules/"] },
  {
    files: ["**/*.ts", "**/*.mts"],
    languageOptions: { parser: tsParser, sourceType: "module" },
  },
  {
    files: ["**/*.ts", "**/*.mts", "**/*.mjs", "**/*.js"],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: { "max-lines": ["error", { max: 500, ...CODE_LINES }] },
  },
  {
    // The product. Tests, benches and scripts are exempt: a describe() holds its cases, and a
    // bench's or a screenshot's scenario is played (and its data written out) in one piece.
    files: ["src/**/*.ts"],
    rules: { "max-lines-per-function": ["error", { max: 60, ...CODE_LINES, IIFEs: true }] },
  },
  {
    // The one file over the limit: bench/run.mjs (over 600 lines once formatted) is to be split by
    // the sections it runs; drop this entry then.
    files: ["bench/run.mjs"],
    rules: { "max-lines": "off" },
  },
  ...layerRules(),
];
