/**
 * Issue 31: admission is decided in one file. The entry ways — proxied HTTP,
 * WebSocket upgrades, forward-auth, and the dispatcher that routes between
 * them — adapt input and output only: none of them loads an admission piece
 * (the bearer check, tenant rules, rate limits, the header policy, the
 * route table) or calls a check itself. Only the pipeline does, and the
 * composition root (`src/gateway.ts` and its builders in `src/gateway/`) that builds the pieces.
 */
import { describe, expect, it } from 'vitest';
import { importsOf, sourceFiles, sourceText } from '../support/source-imports.js';

const PIPELINE = 'src/proxy/decide/pipeline.ts';

const ENTRY_WAYS = [
  'src/http/dispatch.ts',
  'src/proxy/entry-http.ts',
  'src/proxy/entry-upgrade.ts',
  'src/proxy/entry-verify.ts',
  'src/proxy/entry-ext-authz.ts',
];

/** What admits: the bearer and tenant checks, the rate limits, the header policy, the routes. */
const ADMISSION_PIECES = [
  'src/proxy/decide/admit.ts',
  'src/proxy/decide/tenant-match.ts',
  'src/proxy/rate-limits/route-rate-limits.ts',
  'src/proxy/rate-limits/rate-policy.ts',
  'src/proxy/rate-limits/rate-bucket.ts',
  'src/proxy/rate-limits/rate-refusal.ts',
  'src/proxy/decide/header-policy.ts',
  'src/proxy/decide/routes.ts',
  'src/proxy/decide/route-table.ts',
];

/** The pieces that decide whether a request is admitted: outside `decide/`, only these load them. */
const ADMITTING = [
  'src/proxy/decide/admit.ts',
  'src/proxy/decide/tenant-match.ts',
  'src/proxy/rate-limits/route-rate-limits.ts',
];
/** The composition root and its builders make the admitting pieces (`createAdmit`, `createRouteRateLimits`). */
const MAY_BUILD = ['src/gateway/handlers.ts', 'src/gateway/traffic.ts'];

/** Calls that decide: a check run anywhere but the pipeline would be a fourth copy. */
const DECIDING_CALLS = [
  /\bcheckFraming\(/,
  /\btenantChecks\(/,
  /\banonymousAllowed\(/,
  /\.admit\(/,
  /\badmit\(/,
  /\.take\(/,
  /\.checkTenant\(/,
  /\brouteOf\(/,
  /\.rewrite\(/,
  /\.identityHeaders\(/,
  /\boriginalRequestViews\(/,
];

describe('one admission pipeline', () => {
  it('exists, and says that every admission decision lives there', () => {
    expect(sourceText(PIPELINE)).toMatch(/Every admission decision lives here/);
  });

  it.each(ENTRY_WAYS)('%s loads no admission piece (types only)', (file) => {
    const loaded = importsOf(file)
      .filter((i) => !i.typeOnly && ADMISSION_PIECES.includes(i.to))
      .map((i) => i.to);
    expect(loaded).toEqual([]);
  });

  it.each(ENTRY_WAYS)('%s calls no check itself', (file) => {
    const code = withoutComments(sourceText(file));
    expect(DECIDING_CALLS.filter((call) => call.test(code)).map(String)).toEqual([]);
  });

  it('the entry ways get their verdict from the pipeline', () => {
    for (const file of ENTRY_WAYS.slice(1)) {
      expect(
        importsOf(file).some((i) => i.to === PIPELINE && !i.typeOnly),
        file,
      ).toBe(true);
    }
  });

  it('outside src/proxy/decide/, only the composition root loads what admits', () => {
    const loaders = sourceFiles()
      .filter((file) => !file.startsWith('src/proxy/decide/'))
      .filter((file) => importsOf(file).some((i) => !i.typeOnly && ADMITTING.includes(i.to)));
    expect(loaders).toEqual(MAY_BUILD);
  });

  it('inside src/proxy/decide/, only the pipeline loads the bearer check and the buckets', () => {
    const loaders = sourceFiles()
      .filter((file) => file.startsWith('src/proxy/decide/'))
      .filter((file) =>
        importsOf(file).some(
          (i) =>
            !i.typeOnly &&
            (i.to === 'src/proxy/decide/admit.ts' ||
              i.to === 'src/proxy/rate-limits/route-rate-limits.ts'),
        ),
      );
    expect(loaders).toEqual([PIPELINE]);
  });
});

/** The code without its comments: a comment may name a check. */
function withoutComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
}
