/**
 * A real headless Chromium (Debian's `chromium` package) driven by
 * playwright-core, and tiny page servers that give a test a web origin of its
 * own: what a browser app at that origin can and cannot do against the
 * gateway is then the browser's verdict, not the test's idea of it.
 *
 * Without the binary the start fails rather than skipping: CI installs
 * chromium, so a missing one is a broken machine, not an optional feature.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { findExecutable, onPath } from './executables.js';

/** Where Debian puts the browser itself, before the wrapper script on PATH. */
const WELL_KNOWN_BINARIES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'];

/** @throws Error `chromium not found: ...` when no Chromium binary exists. */
export async function startBrowser(): Promise<Browser> {
  const executablePath = findExecutable([...WELL_KNOWN_BINARIES, ...onPath('chromium')]);
  if (executablePath === undefined) {
    throw new Error('chromium not found: apt-get install chromium (CI installs it)');
  }
  return chromium.launch({ executablePath, headless: true });
}

export interface PageOrigin {
  /** `http://127.0.0.1:<port>`: the origin the page's scripts run in. */
  origin: string;
  /** A new tab showing this origin's empty page, ready for `page.evaluate`. */
  open(browser: Browser): Promise<Page>;
  close(): Promise<void>;
}

/** An http server on its own port whose only page is empty: one web origin. */
export async function startPageOrigin(): Promise<PageOrigin> {
  const server: Server = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>app</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    async open(browser) {
      const page = await browser.newPage();
      await page.goto(`${origin}/`);
      return page;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs `run` on a new tab of a fresh context (its own cookies) `width` px wide, then closes the context. */
export async function withBrowserPage<T>(
  browser: Browser,
  run: (page: Page, context: BrowserContext) => Promise<T>,
  options: { width?: number } = {},
): Promise<T> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
  });
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

/**
 * Chromium's virtual authenticator on `page` (CDP `WebAuthn`): CTAP2, built
 * in, resident keys, user verification that always succeeds — a laptop's
 * platform authenticator, for passkeys without a person's touch.
 */
export async function addVirtualAuthenticator(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
}
