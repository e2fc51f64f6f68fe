/**
 * Test certificates made with openssl in a directory: a self-signed CA and
 * certificates it signs, on P-256 keys, valid for two days. Each is a pair of
 * files named for it: `<name>.key` and `<name>.pem`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A self-signed CA in `dir`, `<name>.key` and `<name>.pem`, its subject `subject`. */
export function makeCa(dir: string, name: string, subject = `/CN=${name}`): void {
  const files = ['-keyout', `${name}.key`, '-out', `${name}.pem`];
  openssl(dir, 'req', '-x509', ...EC, ...files, '-days', '2', '-subj', subject);
}

/**
 * A certificate `<name>.pem` for `subject` with its key `<name>.key` in
 * `dir`, signed by the CA `ca` made there, with the one extension line `ext`
 * (e.g. `subjectAltName=DNS:upstream.test`).
 */
export function makeSignedCertificate(
  dir: string,
  name: string,
  subject: string,
  ext: string,
  ca = 'ca',
): void {
  writeFileSync(join(dir, `${name}.ext`), `${ext}\n`);
  openssl(dir, 'req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
  const signer = ['-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial'];
  const out = ['-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`];
  openssl(dir, 'x509', '-req', '-in', `${name}.csr`, ...signer, ...out);
}
