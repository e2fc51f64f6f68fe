// What `npm test` checks before the build and the suite: the type checks and
// the format check, side by side. Each is one process on about one core (tsc,
// prettier), so on the 2-core machine one after another left a core idle for
// most of a minute. Not the build: the type check reads dist/ (test and bench
// .mjs files import it), which the build rewrites. Each command's output is
// held and printed whole when it ends, in the order below; the exit code is 1
// when any of them failed. Plain JavaScript so that Node runs it as is.
import { spawn } from 'node:child_process';

/** [name, argv]; npx and npm resolve from the repository's node_modules as `npm test` does. */
const CHECKS = [
  ['type check (tests, scripts, bench, soak and src)', ['npx', 'tsc', '-p', 'test/tsconfig.json']],
  ['type check (console)', ['npx', 'tsc', '-p', 'console/tsconfig.json']],
  ['format check', ['npx', 'prettier', '--check', '.']],
];

function run([name, [command, ...args]]) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (err) => resolve({ name, code: 1, output: `${output}${err.message}\n` }));
    child.once('close', (code) => resolve({ name, code, output }));
  });
}

const results = await Promise.all(CHECKS.map(run));
for (const { name, code, output } of results) {
  process.stdout.write(`> ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`}\n${output}`);
}
process.exitCode = results.every((r) => r.code === 0) ? 0 : 1;
