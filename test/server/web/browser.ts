// Debian's chromium driven by playwright-core for the web view's browser tests: headless, a fresh
// profile, no network of its own, every dialog and CSP violation recorded (a page must cause none).

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENS_DIR = join(process.cwd(), "artifacts", "screens");
/**
 * A bound on one navigation or screenshot, well under the test's timeout: "opens every page" has
 * hung once in a while on a first run (retried, then passing in 4 s), and a step that hangs then
 * fails with Playwright's own account of what it was waiting for, instead of the test's timeout.
 */
export const STEP_MS = 20_000;

export interface Browser {
  page: Page;
  /** Messages of the dialogs pages opened (an alert() that ran): must stay empty. */
  dialogs: string[];
  /** Console errors saying the CSP blocked something: must stay empty. */
  cspViolations: string[];
  close(): Promise<void>;
}

/** `extraArgs`: more Chromium flags (--host-resolver-rules for a name of the test's own). */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), "uspark-chromium-"));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
    viewport: { width: 1200, height: 800 },
  });
  const dialogs: string[] = [];
  const cspViolations: string[] = [];
  const page = context.pages()[0] ?? (await context.newPage());
  context.on("page", (opened) => watch(opened, dialogs, cspViolations));
  watch(page, dialogs, cspViolations);
  return {
    page,
    dialogs,
    cspViolations,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

function watch(page: Page, dialogs: string[], cspViolations: string[]): void {
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
}

/** A full-page screenshot under artifacts/screens/ (kept by CI as a test artifact). */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENS_DIR, `${name}.png`), fullPage: true, timeout: STEP_MS });
}
