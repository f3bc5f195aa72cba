/** Debian's Chromium under playwright-core, with every `*.localhost` name on loopback and no other name resolvable. */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type Page,
} from 'playwright-core';
import type { Executor } from '../../src/db/database.ts';
import { createSession, SESSION_COOKIE } from '../../src/sign-in/sessions.ts';
import { createHarness, freePort, listen } from './harness.ts';

export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath))
    throw new Error(
      `The browser tests need Chromium at ${executablePath}: apt-get install chromium (or set CHROMIUM_PATH).`,
    );
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP *.localhost 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
}

/** A browser context signed in to the console as `userId` (a real session, its cookie set). */
export async function consoleContext(
  browser: Browser,
  db: Executor,
  userId: string,
  port: number,
  options: BrowserContextOptions = {},
): Promise<BrowserContext> {
  const { token } = await createSession(db, userId);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  await context.addCookies([
    {
      name: SESSION_COOKIE,
      value: token,
      url: `https://console.localhost:${port}`,
      secure: true,
      httpOnly: true,
    },
  ]);
  return context;
}

/** Full-page screenshots of `page` at 1280 and 390 px wide (`<dir>/<name>-<width>.png`), back to 1280 after. */
export async function shootWidths(page: Page, dir: string, name: string): Promise<void> {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: path.join(dir, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * What every console tour starts with: a harness serving real HTTP on a free port (`env` added to
 * its configuration), Chromium, and the screenshot folder (SCREENSHOTS=<dir>, default
 * .data/screenshots). `close()` stops all three.
 */
export async function consoleTour(env: Record<string, string> = {}) {
  const port = await freePort();
  const h = await createHarness({ PORT: String(port), ...env });
  const live = await listen(h.server, port);
  const browser = await launchChromium();
  const shots = process.env.SCREENSHOTS ?? path.resolve('.data', 'screenshots');
  await mkdir(shots, { recursive: true });
  return {
    port,
    h,
    browser,
    shots,
    console: `http://console.localhost:${port}`,
    async close() {
      await browser.close();
      await live.close();
      await h.close();
    },
  };
}
