import type { Context, Middleware } from 'koa';
import type { RequestScope } from '../http/scope.js';

/** The per-request state of the api (`ctx.state`): the gateway's request scope. */
export interface ApiState {
  scope: RequestScope;
}

export type ApiContext = Context & { state: ApiState };
export type ApiMiddleware = Middleware<ApiState>;
