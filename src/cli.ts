#!/usr/bin/env node
/** The command line (docs/command-line.md): the process's argv and io, its exit code. */
import { runCli } from './cli/run.js';

void runCli(process.argv.slice(2)).then((code) => {
  // A refusal ends the process at once; a command that succeeded ends when its
  // work does (`serve` runs until signalled).
  if (code !== 0) process.exit(code);
});
