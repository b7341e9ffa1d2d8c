#!/usr/bin/env node
// The second half of `npm run build`: the CLI that bin/uspark.js runs, bundled from tsc's dist/
// into dist/uspark.js and lazily loaded chunks in dist/chunks/. One file a command loads instead
// of some 60 modules resolved and linked one by one: measured, 20% less start-up CPU for
// `watch-claude` (0.19 s to 0.15 s) and 14% for a push. The library (package.json "exports") is a
// third entry, dist/library.js, re-exporting from the same chunks, so the package carries each
// module once: the tarball holds the bundle and tsc's types, not tsc's modules (those stay in dist/
// for the tests and benches). Packages stay outside the bundle, loaded from node_modules as before.

import { builtinModules } from "node:module";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(repo, "dist");
const entry = path.join(dist, "cli.js");
await rm(path.join(dist, "chunks"), { recursive: true, force: true });
const { output } = await build({
  // pipe-form: what bin/uspark.js loads before the rest (the pipe form's copy of stdin); the
  // bundle imports the copy from the same chunk, so that both share its one instance.
  input: { uspark: entry, "pipe-form": path.join(dist, "commands", "kit", "pipe-form.js"), library: path.join(dist, "index.js") },
  platform: "node",
  // Every bare import is a package (commander, pg, …) or a Node built-in: never bundled.
  external: (id) => !id.startsWith(".") && !path.isAbsolute(id),
  output: {
    dir: dist,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
    // What V8 reads and keeps at every start: no comments (788 lines of JSDoc in the start chunk),
    // and ASCII only (one "…" makes V8 hold the whole source as a two-byte string). The source
    // keeps both, and dist/'s own modules (the library) keep their source maps. Measured
    // (callgrind): --version 226 -> 217 M instructions and 3218 -> 3139 page faults, a push of
    // one file 385 -> 376 M and 3982 -> 3868; comments alone: 221 M and 3185 faults.
    comments: false,
    charset: "ascii",
    // What every command loads at start is one chunk, not the 17 that the modules it shares with
    // lazy chunks were split into: the ESM loader reads, compiles and links each on its own.
    // Measured (callgrind, whole process): push of one file 426 -> 390 M instructions, status
    // 385 -> 359, a short watch-claude --dry-run 354 -> 334, --version 275 -> 239. The pipe
    // form's copy keeps its own small chunk; cli.js stays the entry in dist/, as it reads
    // ../package.json next to it.
    codeSplitting: {
      groups: [
        {
          name: "pipe-form",
          test: /[\\/](commands[\\/]kit[\\/]pipe-form|stream[\\/]early-copy|stream[\\/]passthrough|stream[\\/]stdin)\.js$/,
          priority: 2,
        },
        { name: "start", tags: ["$initial"], test: (id) => id !== entry, priority: 1 },
      ],
    },
  },
  logLevel: "warn",
});

// What the bundle imports must be there when it runs: a Node built-in or a runtime dependency
// (a helper the bundler adds from a dev-only package would fail at run time, not here).
const { dependencies } = JSON.parse(await readFile(path.join(repo, "package.json"), "utf8"));
const chunks = new Map(output.filter((file) => file.type === "chunk").map((chunk) => [chunk.fileName, chunk]));
const packageOf = (id) =>
  id
    .split("/")
    .slice(0, id.startsWith("@") ? 2 : 1)
    .join("/");
const missing = [...chunks.values()]
  .flatMap((chunk) => [...chunk.imports, ...chunk.dynamicImports])
  .filter((id) => !id.startsWith("node:") && !builtinModules.includes(id) && !chunks.has(id) && !(packageOf(id) in dependencies));
if (missing.length > 0) {
  console.error(`bundle: imports neither a Node built-in nor a runtime dependency: ${[...new Set(missing)].join(", ")}`);
  process.exit(1);
}

// What the CLI loads before any command runs stays the start chunk, the pipe form's and the
// bundler's runtime: a module that slipped out of the start group would cost every start its own load.
const atStart = new Set();
const visit = (fileName) => {
  if (atStart.has(fileName) || !chunks.has(fileName)) return;
  atStart.add(fileName);
  for (const id of chunks.get(fileName).imports) visit(id);
};
visit("uspark.js");
const strays = [...atStart].filter((fileName) => !/^(uspark\.js|chunks\/(start|pipe-form|rolldown-runtime)-[\w-]+\.js)$/.test(fileName));
if (strays.length > 0) {
  console.error(`bundle: loaded at start outside the start chunk: ${strays.join(", ")}`);
  process.exit(1);
}

// Built-ins that a command may never need are loaded where first used (src/util/lazy-builtins.ts, the
// API client's transport): imported at start, node:crypto and node:http cost --version, --help and
// a dry run some 40 internal modules (measured: --version 252 -> 226 M instructions).
const eager = [...atStart].flatMap((fileName) => chunks.get(fileName).imports).filter((id) => /^node:(https?|crypto)$/.test(id));
if (eager.length > 0) {
  console.error(`bundle: loaded at start though a command may never need it: ${[...new Set(eager)].join(", ")}`);
  process.exit(1);
}
