/**
 * Issue 20: the shipped alert rules, checked and unit-tested by the real
 * `promtool` (Debian's `prometheus` package): every alert fires where it
 * should and stays quiet beside it, and its runbook entry exists.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { promtoolBinary } from '../support/prometheus.js';

const DIR = join(import.meta.dirname, '../../deploy/prometheus');
const RULES = join(DIR, 'tenant-gateway-alerts.yaml');
const TESTS = join(DIR, 'tenant-gateway-alerts.test.yaml');
const OPERATIONS = join(import.meta.dirname, '../../docs/operations.md');

interface Rule {
  alert: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
}
const rules = (
  parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);

function promtool(...args: string[]): string {
  return execFileSync(promtoolBinary(), args, { cwd: DIR, encoding: 'utf8', stdio: 'pipe' });
}

/**
 * GitHub's heading anchors: lower case, punctuation dropped, spaces to
 * hyphens. A `# comment` inside a fenced code block is no heading.
 */
function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  return new Set(
    [...prose.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      (m[1] as string)
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('deploy/prometheus alert rules', () => {
  it('pass promtool check rules', () => {
    expect(promtool('check', 'rules', RULES)).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('pass their promtool unit tests', () => {
    expect(promtool('test', 'rules', TESTS)).toContain('SUCCESS');
  });

  it('every alert is tested firing and quiet', () => {
    const tests = (
      parse(readFileSync(TESTS, 'utf8')) as {
        tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[];
      }
    ).tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of rules) {
      const cases = tests.filter((t) => t.alertname === alert);
      expect(
        cases.some((c) => (c.exp_alerts ?? []).length > 0),
        `${alert} fires`,
      ).toBe(true);
      expect(
        cases.some((c) => (c.exp_alerts ?? []).length === 0),
        `${alert} stays quiet`,
      ).toBe(true);
    }
  });

  it('every alert has a severity, a summary and a runbook entry in docs/operations.md', () => {
    const anchors = anchorsOf(readFileSync(OPERATIONS, 'utf8'));
    for (const { alert, labels, annotations } of rules) {
      expect(['critical', 'warning'], alert).toContain(labels.severity);
      expect(annotations.summary, alert).toBeTruthy();
      const [file, anchor] = (annotations.runbook_url ?? '').split('#');
      expect(file, alert).toBe('docs/operations.md');
      expect(anchors.has(anchor as string), `${alert}: #${anchor}`).toBe(true);
    }
  });
});
