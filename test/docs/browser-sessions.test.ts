/**
 * docs/browser-sessions.md (issue 44): every fenced YAML block is a config the
 * gateway takes as written, with a route of `auth: session`; the nginx block
 * is run as written against a real nginx in
 * `test/proxy/forward-auth-sessions.test.ts`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import { blocks } from '../support/markdown.js';

const PAGE = readFileSync(new URL('../../docs/browser-sessions.md', import.meta.url), 'utf8');

describe('docs/browser-sessions.md', () => {
  const configs = blocks(PAGE, 'yaml');

  it('has its config blocks', () => {
    expect(configs.length).toBeGreaterThanOrEqual(2);
  });

  it.each(configs.map((text, i) => [i, text] as const))(
    'config block %i is valid, sessions on and a session route',
    (_i, text) => {
      const config = parseConfigText(text, 'docs/browser-sessions.md', {});
      expect(config.sessions.enabled).toBe(true);
      expect(config.routes.some((route) => route.auth === 'session')).toBe(true);
    },
  );

  it('links to the sign-in page exactly as the gateway redirects to it', () => {
    expect(PAGE).toContain('/1/sign-in?return_to=');
    expect(PAGE).toContain('X-Sign-In-Location');
  });
});
