// Issue 44 item 6: the commit page has a work budget. One 1 MiB blob committed under 50 paths cost
// the server 1.7-2.3 GiB and 25-30 s a view, then a 500; now the page reads, diffs and sends a
// bounded amount, streamed, and says where the rest is.

import { describe, expect, it } from "vitest";
import { COMMIT_PAGE_BUDGET, FILE_DIFF_BUDGET } from "../../../src/server/web/page-budget.js";
import { testServer } from "../../kit/server.js";
import { WebClient } from "./web-client.js";

const MiB = 1024 * 1024;

async function openServer() {
  const t = await testServer({});
  const web = new WebClient(t.url);
  await web.signIn("");
  return { t, web };
}

/** `bytes` of text in lines of 16 bytes, each line its number (every line differs from the others). */
function numberedText(bytes: number, tag = ""): Buffer {
  const lines: string[] = [];
  for (let i = 0; lines.length * 16 < bytes; i++) lines.push(`${tag}${i}`.padEnd(15, ".") + "\n");
  return Buffer.from(lines.join("")).subarray(0, bytes);
}

const diffLinesOf = (page: string) => (page.match(/<span class="(add|del|same)">/g) ?? []).length;

describe("the commit page's budget", () => {
  it("one 1 MiB text blob under 50 paths: answered within 5 s, under 2 MiB of page, each path named with a link to its file", async () => {
    const { t, web } = await openServer();
    const blob = await t.upload(numberedText(MiB));
    const changes = Array.from({ length: 50 }, (_, i) => ({ op: "put", path: `big/f${i}.txt`, ...blob }));
    expect((await t.commit({ changes })).status).toBe(200);
    const started = performance.now();
    const page = await web.get("/p/demo/commits/1");
    const ms = performance.now() - started;
    expect(page.status).toBe(200);
    expect(ms).toBeLessThan(5000);
    expect(Buffer.byteLength(page.text)).toBeLessThan(2 * MiB);
    for (let i = 0; i < 50; i++) expect(page.text).toContain(`<a href="/p/demo/f/big/f${i}.txt">`);
    expect(diffLinesOf(page.text)).toBeLessThanOrEqual(COMMIT_PAGE_BUDGET.lines);
    expect(page.headers.get("transfer-encoding")).toBe("chunked"); // streamed, not built whole
    expect(page.text).toContain("this page has shown as much diff as it may");
    expect(page.text.trimEnd().endsWith("</html>")).toBe(true);
  });

  it("one file's diff is cut at its share, with a link to the whole file; a small change is diffed in full", async () => {
    const { t, web } = await openServer();
    const blob = await t.upload(numberedText(64 * 1024));
    const small = await t.upload("one\ntwo\n");
    expect(
      (
        await t.commit({
          changes: [
            { op: "put", path: "long.txt", ...blob },
            { op: "put", path: "short.txt", ...small },
          ],
        })
      ).status,
    ).toBe(200);
    const page = await web.get("/p/demo/commits/1");
    const [long, short] = page.text.split('<section class="card" id="file-2">');
    expect(diffLinesOf(long!)).toBe(FILE_DIFF_BUDGET.lines - 3); // the two file lines and the hunk's are the rest
    expect(long).toContain('Diff cut at 1000 lines (added → 64.0 KiB): <a href="/p/demo/f/long.txt">the whole file</a>.');
    expect(short).toContain(
      '<span class="add"><span class="ln" data-old="" data-new="1"></span>+one\n</span><span class="add"><span class="ln" data-old="" data-new="2"></span>+two\n</span>',
    );
    expect(short).not.toContain("Diff cut");
  });

  it("a change of a large file on each side is summarized with its sizes, not diffed", async () => {
    const { t, web } = await openServer();
    await t.write("data.txt", numberedText(MiB, "a").toString());
    await t.write("data.txt", numberedText(MiB, "b").toString());
    const page = await web.get("/p/demo/commits/2");
    expect(page.status).toBe(200);
    expect(page.text).toContain("1.0 MiB → 1.0 MiB");
    expect(page.text).toContain('<a href="/p/demo/f/data.txt">');
    expect(diffLinesOf(page.text)).toBe(0);
  });
});
