/**
 * Error answers outside Koa: on a plain response, and on a socket whose
 * upgrade was refused (a refused WebSocket gets a real HTTP answer, never a
 * silently dropped socket). Both render through `errorResponse`, the one
 * place errors become JSON.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorResponse } from './errors.js';
import { REQUEST_ID_HEADER } from './request-id.js';

export function sendError(res: ServerResponse, err: unknown): void {
  const rendered = errorResponse(err);
  res.writeHead(rendered.status, rendered.headers).end(rendered.body);
}

export function sendUpgradeError(
  req: IncomingMessage,
  socket: Duplex,
  err: unknown,
  requestId?: string,
): void {
  if (!socket.writable || socket.destroyed) return;
  const res = new ServerResponse(req);
  res.assignSocket(socket as Socket);
  res.shouldKeepAlive = false;
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  if (requestId !== undefined) res.setHeader(REQUEST_ID_HEADER, requestId);
  sendError(res, err);
}
