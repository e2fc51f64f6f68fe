// The benchmark's baseline: http-proxy-3 alone, straight on the http server.
// Usage: node bare-proxy.mjs PORT UPSTREAM_URL. Exits when its stdin closes.
import { serveProxy } from './proxy-process.mjs';

serveProxy((proxyRequest) => proxyRequest);
