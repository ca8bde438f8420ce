/**
 * How the tests launch Chromium: Debian's `/usr/bin/chromium` when it is
 * there (Playwright's own download is not reachable everywhere), else the
 * browser `npx playwright install` puts in Playwright's cache.
 */
import { existsSync } from 'node:fs';
import type { LaunchOptions } from '@playwright/test';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

export function chromiumLaunchOptions(): LaunchOptions {
  if (!existsSync(SYSTEM_CHROMIUM)) return {};
  return {
    executablePath: SYSTEM_CHROMIUM,
    // Quiet: no update checks, sync or QUIC probes going out while tests run.
    args: [
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      '--disable-gpu',
    ],
  };
}
