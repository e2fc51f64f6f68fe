/**
 * What every browser suite checks of a page it shows a person: axe-core's
 * serious and critical violations (none allowed), and screenshots at a
 * phone's and a desktop's width, saved under `test-results/` for a person
 * to look at (the run keeps them; git does not), and the docs' pictures.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const RESULTS = join(import.meta.dirname, '../../test-results');

/**
 * Serious and critical axe-core violations of what the page shows now. axe is
 * evaluated through the DevTools protocol, which the page's CSP does not
 * govern: the page keeps its real policy (no `bypassCSP`) while it is checked.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE};0`);
  const result = (await page.evaluate('axe.run(document)')) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The page at 390 and 1280 px wide, full length, to `test-results/<folder>/<name>-<width>.png`. */
export async function screenshotsAtBothWidths(
  page: Page,
  folder: string,
  name: string,
): Promise<void> {
  const dir = join(RESULTS, folder);
  mkdirSync(dir, { recursive: true });
  const before = page.viewportSize() ?? { width: 1280, height: 900 };
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(before);
}

/**
 * A picture for the docs (`docs/images/`, copied by hand from
 * `test-results/<folder>/docs/<name>.png`): `width` px wide, the top `height`
 * px of the page, or only `part` of it — small enough to commit.
 */
export async function screenshotForDocs(
  page: Page,
  folder: string,
  name: string,
  options: { width?: number; height?: number; part?: Locator } = {},
): Promise<void> {
  const dir = join(RESULTS, folder, 'docs');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  const before = page.viewportSize() ?? { width: 1280, height: 900 };
  await page.setViewportSize({ width: options.width ?? 1280, height: before.height });
  if (options.part !== undefined) await options.part.screenshot({ path });
  else
    await page.screenshot({
      path,
      fullPage: true,
      clip: { x: 0, y: 0, width: options.width ?? 1280, height: options.height ?? 900 },
    });
  await page.setViewportSize(before);
}
