/**
 * Certificates made with openssl for the suites that run a TLS server (a
 * test IdP, a redis-server with TLS): EC P-256 keys, two days of validity.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** In `dir`: a self-signed CA, `<name>.pem` and `<name>.key`, whose subject is `/CN=<commonName>`. */
export function makeCa(dir: string, name: string, commonName = name): void {
  const files = ['-keyout', `${name}.key`, '-out', `${name}.pem`];
  openssl(dir, 'req', '-x509', ...EC_KEY, ...files, '-days', '2', '-subj', `/CN=${commonName}`);
}

/**
 * In `dir`: `server.pem` and `server.key` for `/CN=<commonName>` and
 * `subjectAltName` (e.g. `DNS:localhost,IP:127.0.0.1`), signed by the CA
 * `ca.pem`/`ca.key` there.
 */
export function makeServerCertificate(
  dir: string,
  commonName: string,
  subjectAltName: string,
): void {
  writeFileSync(join(dir, 'server.ext'), `subjectAltName=${subjectAltName}\n`);
  openssl(
    dir,
    'req',
    ...EC_KEY,
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    `/CN=${commonName}`,
  );
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
}
