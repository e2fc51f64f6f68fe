export {
  ConfigError,
  defaultConfig,
  formatPath,
  loadConfigFile,
  parseConfigText,
  validateConfig,
} from './load.js';
export type { LoadedConfig } from './load.js';
export { configSchema } from './schema.js';
export type { CorsConfig, GatewayConfig, RedisConfig, RouteConfig } from './schema.js';
