/** Debian's Chromium under playwright-core, with every `*.localhost` name on loopback and no other name resolvable. */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
