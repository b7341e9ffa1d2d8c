#!/usr/bin/env node
// `npm run docs:generate`: writes the tables of docs/ made from the code's lists (the API's error
// codes, the log's events) from the build in dist/ (src/docs/generated.ts says which).

import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GENERATED_PAGES } from "../dist/docs/generated.js";

const repo = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
for (const [page, generate] of Object.entries(GENERATED_PAGES)) {
  const file = path.join(repo, page);
  const before = await readFile(file, "utf8");
  const after = generate(before);
  if (after !== before) await writeFile(file, after);
  console.log(`${page}: ${after === before ? "unchanged" : "written"}`);
}
