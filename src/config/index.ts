export {
  ConfigError,
  defaultConfig,
  formatPath,
  loadConfigFile,
  loadConfigFiles,
  parseConfigText,
  validateConfig,
} from './load.js';
export type { LoadedConfig, LoadOptions, ServingChecks } from './load.js';
export { configSchema } from './schema.js';
export type { CorsConfig, GatewayConfig, RedisConfig, RouteConfig } from './schema.js';
