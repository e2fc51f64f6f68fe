/**
 * The refusal of a config text that must be refused, for the suites about
 * config validation: the test fails when the text is accepted.
 */
import { expect } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/config/index.js';

/** Where the texts are said to come from. */
export const CONFIG_SOURCE = '/etc/tenant-gateway/gateway.yaml';

/** The ConfigError `text` (with `env`) is refused with. */
export function configErrorOf(text: string, env: NodeJS.ProcessEnv = {}): ConfigError {
  try {
    parseConfigText(text, CONFIG_SOURCE, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`expected a ConfigError for:\n${text}`);
}
