// Issue 44 item 7 in Chromium: on a server started without a token, a page of another site cannot
// create a project (its CORS-simple POST is refused), and a DNS name rebound to the server
// (--host-resolver-rules stands in for the attacker's DNS) reads nothing.

import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { eventually, testServer } from "../../kit/server.js";
import { launchBrowser, STEP_MS, type Browser } from "./browser.js";

const REBOUND = "rebind.test";
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser([`--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`]);
});
afterAll(async () => {
  await browser?.close();
});

/** Another site on this machine: a server on another port, its one page `html`. */
async function otherSite(html: string): Promise<string> {
  const server: Server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // Chromium keeps its connection alive: closed with the server, not waited for.
  onTestFinished(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())));
  return `http://localhost:${(server.address() as { port: number }).port}/`;
}

it("a page of another site POSTs to /api/projects as a CORS-simple request: refused 403, no project", async () => {
  const answers: { method: string; url: string; status: number }[] = [];
  const t = await testServer({ onRequest: (e) => answers.push(e) });
  answers.length = 0; // the test server's own creation of its project
  const body = JSON.stringify(JSON.stringify({ id: "pwned" }));
  const page = await otherSite(`<!doctype html><title>attack</title><script>
fetch(${JSON.stringify(`${t.url}/api/projects`)}, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: ${body} })
  .then(() => (document.title = "sent"), () => (document.title = "failed"));
</script>`);
  await browser.page.goto(page, { timeout: STEP_MS });
  await eventually(async () => answers.some((a) => a.method === "POST" && a.url === "/api/projects"), 10_000);
  expect(answers.find((a) => a.method === "POST")!.status).toBe(403);
  const listing = (await (await fetch(`${t.url}/api/projects`)).json()) as { projects: { id: string }[] };
  expect(listing.projects.map((p) => p.id)).not.toContain("pwned");
});

it("a name rebound to the server gets 421 and a page saying so, not the files", async () => {
  const t = await testServer({});
  await t.write("secret.txt", "the PIN is 1234\n");
  const port = new URL(t.url).port;
  const api = await browser.page.goto(`http://${REBOUND}:${port}/api/projects/demo/files`, { timeout: STEP_MS });
  expect(api!.status()).toBe(421);
  expect(await browser.page.content()).not.toContain("secret.txt");
  const web = await browser.page.goto(`http://${REBOUND}:${port}/login`, { timeout: STEP_MS });
  expect(web!.status()).toBe(421);
  expect(await browser.page.textContent("main")).toContain("does not answer to the name");
});
