import type { Context, Middleware } from 'koa';
import type { GatewayError } from '../errors.js';
import type { RequestScope } from '../http/scope.js';

/** The per-request state of the api (`ctx.state`): the gateway's request scope. */
export interface ApiState {
  scope: RequestScope;
  /**
   * Set by an endpoint a person's browser shows (the sign-in page): its
   * refusals as HTML, for a request that accepts `text/html` rather than
   * JSON. The same `GatewayError`, status and headers, rendered by
   * `renderErrors` as a page instead of the JSON body.
   */
  page?: (error: GatewayError) => string;
  /** Headers a page sets over the sign-in pages' own (`answerPage`), its refusals' too. */
  pageHeaders?: Readonly<Record<string, string>>;
}

export type ApiContext = Context & { state: ApiState };
export type ApiMiddleware = Middleware<ApiState>;
