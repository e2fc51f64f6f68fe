// The design not taken, measured: the same bare proxy, but with the request
// entering Koa first (one middleware, ctx.respond = false), as a Koa-hosted
// proxy hot path would. Usage: node koa-proxy.mjs PORT UPSTREAM_URL.
import Koa from 'koa';
import { serveProxy } from './proxy-process.mjs';

serveProxy((proxyRequest) => {
  const app = new Koa();
  app.silent = true;
  app.use((ctx) => {
    ctx.respond = false;
    proxyRequest(ctx.req, ctx.res);
  });
  return app.callback();
});
