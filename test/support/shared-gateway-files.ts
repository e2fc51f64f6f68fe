/**
 * What several gateway processes of one run share (the soak, the
 * propagation bench): a signing key directory `keys/` and a seed
 * `seed.yaml` with the given users, all members of one org tenant, written
 * into `dir`. Each process's config then names `./keys` and `./seed.yaml`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generateKeyFile } from '../../src/auth/tokens/keys.js';

export async function writeSharedGatewayFiles(
  dir: string,
  users: readonly { email: string; password: string }[],
  tenant: { id: string; name: string },
): Promise<void> {
  const keys = join(dir, 'keys');
  mkdirSync(keys, { mode: 0o700 });
  await generateKeyFile(keys);
  writeFileSync(
    join(dir, 'seed.yaml'),
    stringify({
      users: users.map((u) => ({ email: u.email, password: u.password })),
      tenants: [
        {
          tenant_id: tenant.id,
          type: 'orgtenant',
          name: tenant.name,
          cloud_region: 'local',
          created_by: users[0]?.email,
          members: users.map((u) => u.email),
        },
      ],
    }),
  );
}
