// Issue 44 item 6 in Chromium: the commit of one 1 MiB blob under 50 paths opens as a page (it
// took the server 25-30 s and 2 GiB, then a 500), every path on it, and a summarized file's link
// leads to the file.

import { afterAll, beforeAll, expect, it } from "vitest";
import { testServer } from "../../kit/server.js";
import { launchBrowser, STEP_MS, type Browser } from "./browser.js";

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

it("opens the 50-path commit of a 1 MiB blob in a bounded time, each path listed, a summary's link to its file", async () => {
  const t = await testServer({});
  const text = Array.from({ length: 65536 }, (_, i) => `${i}`.padEnd(15, ".") + "\n").join("");
  const blob = await t.upload(text);
  const changes = Array.from({ length: 50 }, (_, i) => ({ op: "put", path: `big/f${i}.txt`, ...blob }));
  expect((await t.commit({ changes })).status).toBe(200);
  const { page } = browser;
  await page.goto(`${t.url}/login`, { timeout: STEP_MS });
  await page.click("button[type=submit]", { timeout: STEP_MS });
  await page.waitForURL(`${t.url}/`, { timeout: STEP_MS });
  const answer = await page.goto(`${t.url}/p/demo/commits/1`, { timeout: 10_000 });
  expect(answer!.status()).toBe(200);
  expect(await page.locator("main table.filelist tbody tr").count()).toBe(50);
  expect(await page.locator("main section.card").count()).toBe(50);
  await page.click('#file-50 details > p a[href="/p/demo/f/big/f49.txt"]', { timeout: STEP_MS });
  await page.waitForURL(`${t.url}/p/demo/f/big/f49.txt`, { timeout: STEP_MS });
  expect(await page.textContent("h1")).toBe("big/f49.txt");
});
