import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's chromium driven by playwright-core for the console's browser tests (.ci/run installs it): headless, no sandbox
 * (tests run as root), and none of the background networking a closed machine refuses.
 */
export const CHROMIUM = process.env.COLONY_CHROMIUM ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
