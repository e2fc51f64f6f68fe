/**
 * What a CLI run reads and writes: stdout, stderr, stdin and the environment.
 * A run of `node dist/cli.js` has the process's own; `runCli(argv, io)` runs
 * a command with others (the tests run most commands in-process this way,
 * several at once), so the verbs ask `cliIo()` instead of naming `process`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** A password or client secret is prompted for on a TTY, else read to its end. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** The process's own, looked up when used (`process.stdin` is made on first use). */
const PROCESS_IO: CliIo = {
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
  get stdin() {
    return process.stdin;
  },
  get env() {
    return process.env;
  },
};

const current = new AsyncLocalStorage<CliIo>();

/** The io of the run this code is part of. */
export function cliIo(): CliIo {
  return current.getStore() ?? PROCESS_IO;
}

/** Runs `work` (and everything it starts) with `io`. */
export function withCliIo<T>(io: CliIo | undefined, work: () => Promise<T>): Promise<T> {
  return io === undefined ? work() : current.run(io, work);
}
