// Generates the benchmark tree for bench/fswatch.mjs: a project of `dirs` directories holding
// `files` files in total, a `node_modules` of `nmFiles` files (which every watcher is told to
// ignore) and a `.gitignore`d `dist/`. Plain Node ESM, no dependencies.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * @param {string} root an empty directory
 * @param {{ dirs: number; files: number; nmDirs: number; nmFiles: number }} size
 */
export function generateTree(root, { dirs, files, nmDirs, nmFiles }) {
  const content = "export const value = 1;\n";
  // Two levels: src/aNN/bNNN, so that the tree has depth like a real project.
  const perTop = Math.max(1, Math.ceil(Math.sqrt(dirs)));
  const perDir = Math.max(1, Math.ceil(files / dirs));
  let written = 0;
  for (let d = 0; d < dirs; d++) {
    const dir = path.join(root, "src", `a${Math.floor(d / perTop)}`, `b${d % perTop}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < perDir && written < files; f++, written++) writeFileSync(path.join(dir, `f${f}.ts`), content);
  }
  const nmPerDir = Math.max(1, Math.ceil(nmFiles / nmDirs));
  let nmWritten = 0;
  for (let d = 0; d < nmDirs; d++) {
    const dir = path.join(root, "node_modules", `pkg${Math.floor(d / 10)}`, `m${d % 10}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < nmPerDir && nmWritten < nmFiles; f++, nmWritten++) writeFileSync(path.join(dir, `i${f}.js`), content);
  }
  mkdirSync(path.join(root, "dist"), { recursive: true });
  for (let f = 0; f < 100; f++) writeFileSync(path.join(root, "dist", `out${f}.js`), content);
  writeFileSync(path.join(root, ".gitignore"), "dist/\n*.log\n");
  writeFileSync(path.join(root, "README.md"), "# bench\n");
  mkdirSync(path.join(root, "gen"), { recursive: true });
  return { files: written, nmFiles: nmWritten };
}
