// Times bcryptjs compares the way the gateway's password workers run them:
// plain Node, bcryptjs's ESM build (under tsx the same compare runs ~30%
// slower). Usage: node bcrypt-timing.mjs COST RUNS; prints the times in ms as JSON.
import bcrypt from 'bcryptjs';

const cost = Number(process.argv[2]);
const runs = Number(process.argv[3]);
const hash = bcrypt.hashSync('bench-password-1', cost);
const times = [];
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  bcrypt.compareSync('bench-password-1', hash);
  times.push(performance.now() - started);
}
process.stdout.write(JSON.stringify(times));
