import { defaultConfig, loadConfigFile, type LoadedConfig } from '../config/index.js';

/** `--config F`, else `GATEWAY_CONFIG`, else the built-in defaults. */
export async function resolveConfig(flag: string | undefined): Promise<LoadedConfig> {
  const file = flag ?? process.env.GATEWAY_CONFIG;
  return file === undefined || file === '' ? defaultConfig() : loadConfigFile(file);
}
