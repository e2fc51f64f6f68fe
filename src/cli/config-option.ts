import {
  defaultConfig,
  loadConfigFiles,
  type LoadedConfig,
  type LoadOptions,
} from '../config/index.js';
import { cliIo } from './io.js';

/**
 * `--config F` (repeatable: later files are layered on earlier ones), else
 * `GATEWAY_CONFIG`, else the built-in defaults.
 */
export async function resolveConfig(
  flags: readonly string[] | undefined,
  options: LoadOptions = {},
): Promise<LoadedConfig> {
  const { env } = cliIo();
  if (flags !== undefined && flags.length > 0) return loadConfigFiles(flags, env, options);
  const file = env.GATEWAY_CONFIG;
  return file === undefined || file === ''
    ? defaultConfig()
    : loadConfigFiles([file], env, options);
}
