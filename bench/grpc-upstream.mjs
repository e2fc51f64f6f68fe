// The gRPC benchmark's upstream (issue 47): a @grpc/grpc-js server (h2c on
// 127.0.0.1) of the tests' `echo.proto`, whose Unary answers the message it
// got (`text`, `blob`). Its own process, so neither proxy counts its work.
// Usage: node grpc-upstream.mjs PORT. Exits when its stdin closes.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';

const port = Number(process.argv[2]);
const proto = fileURLToPath(new URL('../test/support/echo.proto', import.meta.url));
const { test } = grpc.loadPackageDefinition(loader.loadSync(proto, { keepCase: true }));

const server = new grpc.Server();
server.addService(test.echo.Echo.service, {
  Unary(call, done) {
    done(null, { text: call.request.text, blob: call.request.blob });
  },
});
server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});

process.stdin.resume();
process.stdin.on('close', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
