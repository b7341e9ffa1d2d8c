// The web view's heaviest pages against the memory of `uspark serve` (issue 44: one 1 MiB blob
// under 50 paths made a commit page cost the server 2 GiB): a fresh server (the built CLI, no
// token, --data), then for each page its peak RSS over the idle server's RSS and its time. The
// peak is the process's VmHWM, reset to the current RSS before each page through
// /proc/<pid>/clear_refs (Linux).
//
// Pages: a commit of one text blob at the server's blob size limit under 50 paths; a commit
// changing 50 paths between two texts at the diff limit (256 KiB a side) whose middles fill as
// much of an LCS table as a file may; and the file page of that largest blob, first and last.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createProject, serve } from "./server-commits.mjs";
import { signIn } from "./web-view.mjs";

const MiB = 1024 * 1024;
const PATHS = 50;
/** The web view's diff limit for a changed file's side (src/server/web/page-budget.ts). */
const DIFF_SIDE_BYTES = 256 * 1024;
/** Lines of the changed middle: (n + 1)² cells just under a file's share of LCS cells, 1,000,000 (page-budget.ts). */
const CHANGED_LINES = 998;

export async function measurePageMemory({ bin, work, blobMiB = 100, paths = PATHS }) {
  const server = await serve(bin, ["--data", path.join(work, "page-memory-data"), "--max-blob-bytes", String(blobMiB * MiB)]);
  try {
    const api = `${server.url}/api/projects/pages`;
    await createProject(server.url, "pages");
    await commitAt(api, paths, await putBlob(api, textBlob(blobMiB * MiB, "big")), "big");
    const changedFrom = await putBlob(api, textBlob(DIFF_SIDE_BYTES, "x"));
    const changedTo = await putBlob(api, textBlob(DIFF_SIDE_BYTES, "x", CHANGED_LINES));
    await commitAt(api, paths, changedFrom, "changed");
    await commitAt(api, paths, changedTo, "changed");
    const cookie = await signIn(server.url);
    const pages = {
      [`commit of a ${blobMiB} MiB blob under ${paths} paths`]: "/p/pages/commits/1",
      [`commit changing ${paths} files of 256 KiB`]: "/p/pages/commits/3",
      [`file page of the ${blobMiB} MiB blob`]: "/p/pages/f/big/f0.txt",
      [`file page of the ${blobMiB} MiB blob, its last page`]: `/p/pages/f/big/f0.txt?from=${blobMiB * MiB - 1000}`,
    };
    const idleMiB = statusKiB(server.pid, "VmRSS") / 1024;
    const rows = [];
    for (const [name, page] of Object.entries(pages)) {
      writeFileSync(`/proc/${server.pid}/clear_refs`, "5");
      const started = performance.now();
      const bytes = await load(server.url + page, cookie);
      const ms = performance.now() - started;
      rows.push({ name, ms, pageBytes: bytes, overIdleMiB: statusKiB(server.pid, "VmHWM") / 1024 - idleMiB });
    }
    return { idleMiB, rows };
  } finally {
    await server.stop();
  }
}

/** `bytes` of text in numbered lines of 16 bytes; `changed` lines in the middle carry another tag. */
function textBlob(bytes, tag, changed = 0) {
  const lines = Math.floor(bytes / 16);
  const from = Math.floor((lines - changed) / 2);
  const text = Buffer.alloc(lines * 16);
  for (let i = 0; i < lines; i++) {
    const mark = i >= from && i < from + changed ? "y" : tag;
    text.write(`${mark}${i}`.padEnd(15, ".") + "\n", i * 16, "latin1");
  }
  return text;
}

async function putBlob(api, bytes) {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const res = await fetch(`${api}/blobs/${sha256}`, { method: "PUT", body: bytes });
  if (res.status !== 201 && res.status !== 200) throw new Error(`PUT blob answered ${res.status}: ${await res.text()}`);
  return { sha256, size: bytes.length };
}

async function commitAt(api, paths, blob, dir) {
  const changes = Array.from({ length: paths }, (_, i) => ({ op: "put", path: `${dir}/f${i}.txt`, ...blob }));
  const res = await fetch(`${api}/commits`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() },
    body: JSON.stringify({ changes }),
  });
  if (res.status !== 200) throw new Error(`commit answered ${res.status}: ${await res.text()}`);
}

/** The page's bytes, read to the end (its time is the caller's). */
async function load(url, cookie) {
  const res = await fetch(url, { headers: { cookie } });
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return bytes;
}

function statusKiB(pid, field) {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
}
