#!/usr/bin/env node
/** The command line (docs/command-line.md): the process's argv and io, its exit code. */
import module from 'node:module';

// V8's compile cache (Node >= 22.1; Node 20 has no such function): the modules
// a start loads are compiled once and read back by later starts, from Node's
// default folder under the OS temp dir. About a fifth less CPU to load the
// gateway on Node 24 (docs/architecture.md, "Start-up cost"). Each entry is
// checked against its source's hash, so a changed file is compiled anew;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. A folder that cannot be written
// leaves it off, silently. Before the imports below: they are what it caches.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const { runCli } = await import('./cli/run.js');

void runCli(process.argv.slice(2)).then((code) => {
  // A refusal ends the process at once; a command that succeeded ends when its
  // work does (`serve` runs until signalled).
  if (code !== 0) process.exit(code);
});
