export {
  checkServingFiles,
  ConfigError,
  defaultConfig,
  formatPath,
  loadConfigFile,
  loadConfigFiles,
  parseConfigText,
  validateConfig,
} from './load.js';
export type { LoadedConfig } from './load.js';
export { configSchema } from './schema.js';
export type { CorsConfig, GatewayConfig, RedisConfig, RouteConfig } from './schema.js';
