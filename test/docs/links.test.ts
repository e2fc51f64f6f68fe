/**
 * The documentation holds together in every clone: no link in README.md or
 * docs/ leaves the repository, every relative link names a file that exists,
 * every `#anchor` names a heading of its page, and the README stays short
 * enough to read first, with every question a newcomer brings answered from
 * its first screen.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The page without its fenced code blocks and inline code (links there are examples, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Every link target of a page: inline links, reference definitions, autolinks and bare URLs. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  return [
    ...[...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1] as string),
    ...[...text.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)].map((m) => m[1] as string),
    ...[...text.matchAll(/(?<![(<\w])(https?:\/\/[^\s)>\]]+)/g)].map((m) => m[1] as string),
  ];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2 … */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const headings = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`([^`\n]*)`/g, '$1');
  for (const [, heading] of headings.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (heading as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

describe('links in README.md and docs/', () => {
  it.each(PAGES)('%s: no link leaves the repository', (page) => {
    const outside = linkTargets(read(page)).filter((target) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return true;
      if (target.startsWith('#')) return false;
      const file = resolve(ROOT, dirname(page), target.split('#')[0] as string);
      return relative(ROOT, file).startsWith('..');
    });
    expect(outside).toEqual([]);
  });

  it.each(PAGES)(
    '%s: every relative link names an existing file, every anchor a heading',
    (page) => {
      const broken: string[] = [];
      for (const target of linkTargets(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // refused by the test above
        const [pathPart, anchor] = target.split('#') as [string, string | undefined];
        const file = pathPart === '' ? join(ROOT, page) : resolve(ROOT, dirname(page), pathPart);
        if (!existsSync(file)) {
          broken.push(`${target}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.endsWith('.md') || statSync(file).isDirectory()) {
          broken.push(`${target}: an anchor into a file that is not markdown`);
        } else if (!anchorsOf(readFileSync(file, 'utf8')).has(anchor)) {
          broken.push(`${target}: no heading with that anchor`);
        }
      }
      expect(broken).toEqual([]);
    },
  );

  it('computes anchors as GitHub does (the checker itself)', () => {
    const anchors = anchorsOf(
      "# Top\n## nginx (`auth_request`)\n## What this build's run says\n## Top\n```\n# not a heading\n```\n",
    );
    expect([...anchors]).toEqual([
      'top',
      'nginx-auth_request',
      'what-this-builds-run-says',
      'top-1',
    ]);
  });
});

describe('README.md for the first reader', () => {
  const readme = read('README.md');

  it('is at most 250 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  });

  it('answers run, front, config, deploy, monitor and refusals from its first screen, one click each', () => {
    const firstScreen = readme.split('\n').slice(0, 40).join('\n');
    for (const target of [
      '#the-two-commands',
      '#front-your-service',
      'docs/configuration.md',
      'docs/deploying.md',
      'docs/operations.md',
      'docs/security.md#every-refusal',
    ]) {
      expect(linkTargets(firstScreen), target).toContain(target);
    }
  });
});
