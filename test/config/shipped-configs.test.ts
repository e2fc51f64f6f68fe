/**
 * The configurations shipped in config/ (issue 5): every gateway config there
 * passes the real loader — the plain files and the `gateway.yaml` inside each
 * Kubernetes ConfigMap — and the manifests around them agree with them (the
 * config path, the environment it needs, probe and listener ports, the
 * forward-auth address and the identity headers copied to the services).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfigFile, parseConfigText, type GatewayConfig } from '../../src/config/index.js';

const root = resolve(import.meta.dirname, '../../config');
const k8sDir = resolve(root, '../deploy/examples');

/** The environment the configs' `${VAR}` references need (in Kubernetes: from Secrets). */
const ENV = { REDIS_PASSWORD: 'not-a-real-password' };

const isYaml = (name: string) => /\.ya?ml$/.test(name);
const isSeed = (name: string) => /seed/.test(name);

/** The fields of the Kubernetes objects these tests read. */
interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; annotations?: Record<string, string> };
  /** ConfigMap */
  data?: Record<string, unknown>;
  spec?: {
    /** Service */
    ports?: { port: number; targetPort?: string | number }[];
    /** Deployment */
    template?: { spec?: PodSpec };
    /** Traefik Middleware */
    forwardAuth?: { address: string; trustForwardHeader?: boolean; authResponseHeaders?: string[] };
    /** Envoy Gateway SecurityPolicy */
    extAuth?: {
      failOpen?: boolean;
      headersToExtAuth?: string[];
      http: {
        backendRefs: { name: string; port: number }[];
        path: string;
        headersToBackend?: string[];
      };
    };
  };
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
}
interface HttpProbe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: HttpProbe;
  readinessProbe?: HttpProbe;
  volumeMounts?: { name: string; mountPath: string }[];
}

/** Every document of a manifest file; a YAML error fails the whole test file, naming it. */
function manifestsIn(file: string): Manifest[] {
  const docs = parseAllDocuments(readFileSync(join(k8sDir, file), 'utf8'), { uniqueKeys: true });
  return docs.map((doc, i) => {
    if (doc.errors.length > 0) {
      throw new Error(
        `deploy/examples/${file}, document ${i + 1}: ${doc.errors.map((e) => e.message).join('; ')}`,
      );
    }
    return doc.toJS() as Manifest;
  });
}

interface ShippedConfig {
  /** `production.yaml`, or `deploy/examples/envoy-gateway-extauth.yaml ConfigMap tenant-gateway-config gateway.yaml`. */
  label: string;
  load: (env: NodeJS.ProcessEnv) => Promise<GatewayConfig>;
}

const plainFiles = readdirSync(root)
  .filter((n) => isYaml(n) && !isSeed(n))
  .sort();
const manifestFiles = readdirSync(k8sDir).filter(isYaml).sort();

/** The gateway configs inside one manifest file's ConfigMaps. */
function configMapConfigs(file: string): ShippedConfig[] {
  return manifestsIn(file)
    .filter((m) => m.kind === 'ConfigMap')
    .flatMap((m) =>
      Object.entries(m.data ?? {})
        .filter(([key]) => isYaml(key) && !isSeed(key))
        .map(([key, text]) => ({
          label: `deploy/examples/${file} ConfigMap ${String(m.metadata?.name)} ${key}`,
          load: async (env: NodeJS.ProcessEnv) =>
            // Relative paths would resolve against deploy/examples.
            parseConfigText(String(text), `${join(k8sDir, file)} (ConfigMap, ${key})`, env),
        })),
    );
}

const configs: ShippedConfig[] = [
  ...plainFiles.map((name) => ({
    label: name,
    load: async (env: NodeJS.ProcessEnv) => (await loadConfigFile(join(root, name), env)).config,
  })),
  ...manifestFiles.flatMap(configMapConfigs),
];

describe('the gateway configs shipped in config/', () => {
  it('are all found: a file or ConfigMap skipped by mistake fails here', () => {
    const k8s = (file: string) =>
      `deploy/examples/${file} ConfigMap tenant-gateway-config gateway.yaml`;
    expect(configs.map((c) => c.label)).toEqual([
      'gateway.yaml',
      'production.yaml',
      k8s('envoy-gateway-extauth.yaml'),
    ]);
    expect(configs).toHaveLength(3);
  });

  it.each(manifestFiles)('deploy/examples/%s has a gateway config in a ConfigMap', (file) => {
    expect(configMapConfigs(file).length).toBeGreaterThanOrEqual(1);
  });

  it.each(configs.map((c) => [c.label, c] as const))('%s validates', async (_label, shipped) => {
    const config = await shipped.load(ENV);
    expect(config.listen.port).toBeGreaterThan(0);
  });

  it.each(configs.map((c) => [c.label, c] as const))(
    '%s serves health and metrics on an admin listener, never on the public one',
    async (_label, shipped) => {
      const config = await shipped.load(ENV);
      expect(config.admin).toBeDefined();
      expect(config.listen.opsEndpoints).toBe(false);
    },
  );

  it('config/gateway.yaml runs the demo: in-memory store, signup on, demo seed next to it', async () => {
    const { config } = await loadConfigFile(join(root, 'gateway.yaml'), {});
    expect(config.store.redis).toBeUndefined();
    expect(config.signup.enabled).toBe(true);
    expect(config.seed).toBe(join(root, 'demo-seed.yaml'));
    // Loopback, on a free port: a busy 9090 (Prometheus's own) never stops `npm start`.
    expect(config.admin).toEqual({ host: '127.0.0.1', port: 0, configReload: false });
    expect(readFileSync(config.seed as string, 'utf8')).toContain('users:');
  });

  it('config/production.yaml is a production set-up: Redis, mounted keys, admin port, no signup', async () => {
    const { config } = await loadConfigFile(join(root, 'production.yaml'), ENV);
    expect(config.store.redis?.url).toBe('redis://:not-a-real-password@redis:6379/0');
    expect(config.tokens.keys).toBe('/etc/tenant-gateway/keys');
    expect(config.admin).toMatchObject({ port: 9090, configReload: false });
    expect(config.signup.enabled).toBe(false);
    expect(config.trustedProxies).toEqual(['10.0.0.0/8']);
    expect(config.routes.map((r) => Object.keys(r.tenant ?? {}).sort())).toEqual([
      ['header', 'path'],
      ['host'],
      [],
    ]);
    expect(config.routes.map((r) => [r.prefix, r.hosts, r.auth, r.cors?.origins])).toEqual([
      ['/orders', undefined, 'bearer', ['https://app.example.com']],
      ['/', ['*.reports.example.com'], 'bearer', undefined],
      ['/status', undefined, 'none', undefined],
    ]);
    expect(config.cors?.origins).toEqual(['https://app.example.com']);
  });
});

describe('the Kubernetes examples in deploy/examples (the kustomize package has its own test)', () => {
  it.each(manifestFiles)(
    'deploy/examples/%s: every document is a named Kubernetes object',
    (file) => {
      const manifests = manifestsIn(file);
      expect(manifests.length).toBeGreaterThan(1);
      for (const m of manifests) {
        expect(m, `${file}: ${JSON.stringify(m).slice(0, 80)}`).toMatchObject({
          apiVersion: expect.stringMatching(/^[a-z0-9.]*\/?v\d\w*$/),
          kind: expect.stringMatching(/^[A-Z]\w+$/),
          metadata: { name: expect.stringMatching(/^[a-z0-9][a-z0-9.-]*$/) },
        });
      }
    },
  );

  /** The gateway container of the file's one Deployment, and the config it runs. */
  function gatewayDeployment(file: string) {
    const manifests = manifestsIn(file);
    const found = manifests.flatMap((m) => {
      const pod = m.kind === 'Deployment' ? m.spec?.template?.spec : undefined;
      return (pod?.containers ?? [])
        .filter((c) => c.name === 'tenant-gateway')
        .map((container) => ({ volumes: pod?.volumes ?? [], container }));
    });
    expect(found, `deploy/examples/${file}: one tenant-gateway container`).toHaveLength(1);
    const { volumes, container } = found[0]!;
    const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? 'x']));
    const configPath = env.GATEWAY_CONFIG ?? '';
    const slash = configPath.lastIndexOf('/');
    const mount = container.volumeMounts?.find((v) => v.mountPath === configPath.slice(0, slash));
    const volume = volumes.find((v) => v.name === mount?.name);
    const configMap = manifests.find(
      (m) => m.kind === 'ConfigMap' && m.metadata?.name === volume?.configMap?.name,
    );
    const text = configMap?.data?.[configPath.slice(slash + 1)];
    expect(
      text,
      `deploy/examples/${file}: GATEWAY_CONFIG is a key of a mounted ConfigMap`,
    ).toBeTypeOf('string');
    // Only the variables the container sets: a reference to one it lacks fails here.
    const config = parseConfigText(String(text), join(k8sDir, file), env);
    return { manifests, volumes, container, config };
  }

  it.each(manifestFiles)(
    'deploy/examples/%s: the Deployment runs its ConfigMap with the ports, keys and variables it names',
    (file) => {
      const { volumes, container, config } = gatewayDeployment(file);
      const portOf = (p: string | number | undefined) =>
        typeof p === 'number' ? p : container.ports?.find((q) => q.name === p)?.containerPort;
      expect(portOf('http')).toBe(config.listen.port);
      expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
      expect(config.admin?.port).toBeDefined();
      expect(portOf(container.livenessProbe?.httpGet?.port)).toBe(config.admin?.port);
      expect(portOf(container.readinessProbe?.httpGet?.port)).toBe(config.admin?.port);
      const keys = container.volumeMounts?.find((v) => v.mountPath === config.tokens.keys);
      expect(volumes.find((v) => v.name === keys?.name)?.secret?.secretName).toBe(
        'tenant-gateway-keys',
      );
    },
  );

  const forwardAuthFiles = manifestFiles;

  it('the forward-auth example is Envoy Gateway’s (ingress-nginx and Traefik are kustomize overlays)', () => {
    expect(forwardAuthFiles).toEqual(['envoy-gateway-extauth.yaml']);
  });

  /** Where Envoy asks for a verdict, and which response headers it copies upstream. */
  function forwardAuthWiring(manifests: Manifest[], config: GatewayConfig) {
    const spec = (kind: string) => manifests.find((m) => m.kind === kind)?.spec;
    const extAuth = spec('SecurityPolicy')?.extAuth;
    expect(extAuth?.failOpen).toBe(false);
    // Envoy sends an HTTP ext-auth service no other client header unless listed.
    const tenantHeaders = config.routes.flatMap((r) => r.tenant?.header ?? []);
    expect(tenantHeaders.length).toBeGreaterThan(0);
    expect(extAuth?.headersToExtAuth).toEqual(expect.arrayContaining(tenantHeaders));
    const backend = extAuth?.http.backendRefs[0];
    return {
      address: `http://${backend?.name}:${backend?.port}${extAuth?.http.path}`,
      copied: extAuth?.http.headersToBackend,
    };
  }

  it.each(forwardAuthFiles)(
    'deploy/examples/%s: asks /auth/verify of the gateway Service and copies every identity header',
    (file) => {
      const { manifests, config } = gatewayDeployment(file);
      const { address, copied } = forwardAuthWiring(manifests, config);
      const url = new URL(address ?? '');
      expect(url.pathname).toBe('/auth/verify');
      const service = manifests.find((m) => m.kind === 'Service');
      expect(service?.metadata?.name).toBe('tenant-gateway');
      expect(url.hostname.split('.')[0]).toBe(service?.metadata?.name);
      // The Service port asked for leads to the gateway's listener.
      const port = service?.spec?.ports?.find((p) => p.port === Number(url.port));
      expect(port?.targetPort).toBe('http');
      expect(copied).toEqual(Object.values(config.identityHeaders));
    },
  );
});
