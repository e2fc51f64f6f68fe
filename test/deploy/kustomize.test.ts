/**
 * Issue 21: the Kubernetes package. Every overlay (and the components on
 * top of one) is rendered by the real `kubectl kustomize`, and what it
 * renders is checked as a cluster would take it: each object against the
 * Kubernetes OpenAPI schemas (kubernetes-models; the Prometheus Operator
 * and Traefik CRDs against their own, and External Secrets' against its CRD's
 * schema in `crd-schemas/`), the config in the
 * ConfigMap against the gateway's own validator, every name one object
 * uses for another resolved inside the render, and the secure defaults:
 * no Service exposes the admin port, NetworkPolicies name who may connect,
 * every container runs non-root, read-only, without capabilities.
 *
 * The schema validators check types, formats and required fields; they let
 * unknown fields pass (a misspelt `securityContex` would be dropped by the
 * API server), so the fields the gateway relies on are asserted by name.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { loadConfigFiles } from '../../src/config/index.js';
import { findExecutable, onPath } from '../support/executables.js';
import { selectionProblems } from './pod-selection.js';

const ROOT = join(import.meta.dirname, '../..');
const KUSTOMIZE = join(ROOT, 'deploy/kustomize');
const ADMIN_PORT = 9090;

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  /** Rendered YAML: what each assertion reads of it. */
  spec?: any;
  data?: Record<string, string>;
};

function kubectl(): string {
  const binary = findExecutable([
    ...onPath('kubectl'),
    '/usr/bin/kubectl',
    '/usr/local/bin/kubectl',
  ]);
  if (binary === undefined)
    throw new Error('kubectl not found: apt-get install kubectl (CI installs it)');
  return binary;
}

const temp = mkdtempSync(join(tmpdir(), 'tg-kustomize-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** An overlay with components added, as a user would write it next to ours. */
function withComponents(overlay: string, components: string[]): string {
  const dir = mkdtempSync(join(temp, `${overlay}-`));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${relative(dir, join(KUSTOMIZE, 'overlays', overlay))}`,
      'components:',
      // Relative, as kustomize requires.
      ...components.map((c) => `  - ${relative(dir, join(KUSTOMIZE, 'components', c))}`),
    ].join('\n'),
  );
  return dir;
}

function render(dir: string): Obj[] {
  const text = execFileSync(kubectl(), ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJS() as Obj);
}

const OVERLAYS = ['sidecar', 'gateway', 'ingress-nginx', 'traefik'] as const;
const FORWARD_AUTH = { 'ingress-nginx': 'ingress-nginx', traefik: 'traefik' } as Record<
  string,
  string
>;
const renders: { name: string; overlay: string; objects: () => Obj[] }[] = [
  ...OVERLAYS.map((o) => ({ name: o, overlay: o, dir: join(KUSTOMIZE, 'overlays', o) })),
  {
    name: 'gateway + redis-sentinel',
    overlay: 'gateway',
    dir: withComponents('gateway', ['redis-sentinel']),
  },
  {
    name: 'traefik + redis-sentinel + external-secrets',
    overlay: 'traefik',
    dir: withComponents('traefik', ['redis-sentinel', 'external-secrets']),
  },
].map(({ name, overlay, dir }) => {
  let cached: Obj[] | undefined;
  return { name, overlay, objects: () => (cached ??= render(dir)) };
});

/** The model class for an object, from the maintained packages of its API group. */
async function modelOf(obj: Obj): Promise<{ new (data: unknown): { validate(): void } }> {
  const [group, version] = obj.apiVersion.includes('/')
    ? (obj.apiVersion.split('/') as [string, string])
    : ['', obj.apiVersion];
  const modules: Record<string, string> = {
    '': `kubernetes-models/${version}`,
    apps: `kubernetes-models/apps/${version}`,
    policy: `kubernetes-models/policy/${version}`,
    autoscaling: `kubernetes-models/autoscaling/${version}`,
    'networking.k8s.io': `kubernetes-models/networking.k8s.io/${version}`,
    'monitoring.coreos.com': `@kubernetes-models/prometheus-operator/monitoring.coreos.com/${version}`,
    'traefik.io': `@kubernetes-models/traefik/traefik.io/${version}`,
  };
  if (group === 'external-secrets.io') return crdModel(`${group}_${version}_${obj.kind}.yaml`);
  const module = modules[group];
  if (module === undefined) throw new Error(`no schema for ${obj.apiVersion}`);
  const model = ((await import(module)) as Record<string, unknown>)[obj.kind];
  if (typeof model !== 'function') throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
  return model as { new (data: unknown): { validate(): void } };
}

/**
 * A model class validating against a CRD's own schema (`crd-schemas/`), for an API whose
 * model package requires a newer Node than the project supports. Like the model packages:
 * types, formats but `date-time`, required fields; unknown fields pass.
 */
function crdModel(file: string): { new (data: unknown): { validate(): void } } {
  const path = join(import.meta.dirname, 'crd-schemas', file);
  const ajv = new Ajv({ strict: false, allErrors: true, formats: { 'date-time': true } });
  const check = ajv.compile(parse(readFileSync(path, 'utf8')) as object);
  return class {
    constructor(private readonly data: unknown) {}
    validate(): void {
      if (!check(this.data)) throw new Error(`${file}: ${ajv.errorsText(check.errors)}`);
    }
  };
}

const ofKind = (objects: Obj[], kind: string) => objects.filter((o) => o.kind === kind);
const one = (objects: Obj[], kind: string, name?: string): Obj => {
  const found = objects.filter(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Obj;
};

interface Container {
  name: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  livenessProbe?: { httpGet: { port: string | number } };
  readinessProbe?: { httpGet: { port: string | number } };
  securityContext?: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  volumeMounts?: { name: string; mountPath: string }[];
}
const podOf = (objects: Obj[]) => one(objects, 'Deployment', 'tenant-gateway').spec.template.spec;
const containersOf = (objects: Obj[]): Container[] => podOf(objects).containers as Container[];
const gatewayContainer = (objects: Obj[]) =>
  containersOf(objects).find((c) => c.name === 'tenant-gateway') as Container;
const portNames = (objects: Obj[]) =>
  new Map(
    containersOf(objects).flatMap((c) => (c.ports ?? []).map((p) => [p.name, p.containerPort])),
  );

/** The config in the render's ConfigMap, layered as the gateway container's args read it, validated. */
async function renderedConfig(objects: Obj[]) {
  const configMap = one(objects, 'ConfigMap');
  const dir = mkdtempSync(join(temp, 'config-'));
  for (const [file, text] of Object.entries(configMap.data ?? {}))
    writeFileSync(join(dir, file), text);
  const args = gatewayContainer(objects).args ?? [];
  expect(args[0]).toBe('serve');
  const files = args.flatMap((a, i) =>
    args[i - 1] === '--config' ? [join(dir, basename(a))] : [],
  );
  expect(files.length).toBeGreaterThanOrEqual(2);
  return (await loadConfigFiles(files, { REDIS_PASSWORD: 'from-the-secret' })).config;
}

async function expectValidObjects(objects: Obj[]) {
  for (const obj of objects) {
    const Model = await modelOf(obj);
    expect(() => new Model(obj).validate(), `${obj.kind} ${obj.metadata.name}`).not.toThrow();
  }
}

describe.each(renders)('kubectl kustomize $name', ({ overlay, objects }) => {
  it('renders objects that each pass the Kubernetes (or their CRD’s) schema', async () => {
    expect(objects().length).toBeGreaterThan(5);
    await expectValidObjects(objects());
  });

  it('has what production needs: Deployment, Service, ConfigMap, PDB, HPA, NetworkPolicy, PodMonitor, PrometheusRule', () => {
    const kinds = new Set(objects().map((o) => o.kind));
    for (const kind of [
      'Deployment',
      'Service',
      'ConfigMap',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
      'NetworkPolicy',
      'PodMonitor',
      'PrometheusRule',
    ])
      expect(kinds, kind).toContain(kind);
  });

  it('the config in its ConfigMap, layered as the Deployment reads it, passes the gateway’s validator', async () => {
    const config = await renderedConfig(objects());
    const args = gatewayContainer(objects()).args ?? [];
    expect(config.tokens.keys).toBe('/etc/tenant-gateway/keys');
    expect(config.admin?.port).toBe(ADMIN_PORT);
    // Trusted proxies narrowed: nothing as wide as 10.0.0.0/8.
    for (const cidr of config.trustedProxies)
      expect(Number(cidr.split('/')[1] ?? 32)).toBeGreaterThanOrEqual(16);
    const ports = portNames(objects());
    expect(ports.get('http')).toBe(config.listen.port);
    expect(ports.get('admin')).toBe(config.admin?.port);
    if (overlay in FORWARD_AUTH) expect(ports.get('forward-auth')).toBe(config.forwardAuth?.port);
    else expect(config.forwardAuth).toBeUndefined();
    if (args.includes('/etc/tenant-gateway/store.yaml')) {
      expect(config.store.redis?.sentinel?.name).toBe('mymaster');
      expect(config.store.redis?.url).toBeUndefined();
    }
  });

  it('every name one object gives another resolves inside the render', () => {
    const objs = objects();
    const ports = portNames(objs);
    const pod = podOf(objs);
    for (const c of containersOf(objs)) {
      for (const probe of [c.livenessProbe, c.readinessProbe].filter((p) => p !== undefined))
        expect(ports.has(String(probe.httpGet.port)), `${c.name} probe port`).toBe(true);
      for (const mount of c.volumeMounts ?? [])
        expect(pod.volumes.map((v: { name: string }) => v.name)).toContain(mount.name);
    }
    const configMaps = ofKind(objs, 'ConfigMap').map((o) => o.metadata.name);
    const secrets = new Set<string>();
    for (const volume of pod.volumes) {
      if (volume.configMap) expect(configMaps).toContain(volume.configMap.name);
      if (volume.secret) secrets.add(volume.secret.secretName);
    }
    for (const c of containersOf(objs) as (Container & {
      env?: { valueFrom?: { secretKeyRef?: { name: string } } }[];
    })[])
      for (const e of c.env ?? [])
        if (e.valueFrom?.secretKeyRef) secrets.add(e.valueFrom.secretKeyRef.name);
    // Created by the operator (docs/deploying.md) or by the external-secrets component.
    expect([...secrets].sort()).toEqual(['tenant-gateway-keys', 'tenant-gateway-redis']);
    const external = ofKind(objs, 'ExternalSecret').map((o) => o.spec.target.name);
    if (external.length > 0) expect(external.sort()).toEqual([...secrets].sort());
    const deploying = readFileSync(join(ROOT, 'docs/deploying.md'), 'utf8');
    for (const secret of secrets) expect(deploying).toContain(`create secret generic ${secret}`);

    const labels = pod.labels ?? one(objs, 'Deployment').spec.template.metadata.labels;
    for (const service of ofKind(objs, 'Service')) {
      for (const [k, v] of Object.entries(service.spec.selector as Record<string, string>))
        expect(labels[k]).toBe(v);
      for (const p of service.spec.ports)
        expect(ports.has(String(p.targetPort)), `${service.metadata.name} ${p.targetPort}`).toBe(
          true,
        );
    }
    for (const policy of ofKind(objs, 'NetworkPolicy'))
      for (const rule of policy.spec.ingress)
        for (const p of rule.ports)
          expect(ports.has(String(p.port)), `NetworkPolicy port ${p.port}`).toBe(true);
    for (const monitor of ofKind(objs, 'PodMonitor'))
      for (const e of monitor.spec.podMetricsEndpoints) expect(ports.get(e.port)).toBe(ADMIN_PORT);

    // What the ingress asks, and where it sends the identity API, exists here.
    const serviceNamed = (name: string) =>
      ofKind(objs, 'Service').find((s) => s.metadata.name === name);
    const authUrls = [
      ...ofKind(objs, 'Ingress').map(
        (i) => i.metadata.annotations?.['nginx.ingress.kubernetes.io/auth-url'],
      ),
      ...ofKind(objs, 'Middleware').map((m) => m.spec.forwardAuth?.address),
    ].filter((u): u is string => u !== undefined);
    if (overlay in FORWARD_AUTH) expect(authUrls).toHaveLength(1);
    for (const url of authUrls) {
      const { hostname, port, pathname } = new URL(url);
      const [name, namespace] = hostname.split('.');
      expect(namespace).toBe(one(objs, 'Deployment').metadata.namespace);
      const service = serviceNamed(name as string);
      expect(service?.spec.ports.map((p: { port: number }) => String(p.port))).toContain(port);
      expect(pathname).toBe('/auth/verify');
    }
    // What the ingress copies from the verdict onto the proxied request: every identity
    // header, and Authorization and X-API-Key, removed when the verdict lacks them (issue 42).
    const copied = [
      ...ofKind(objs, 'Ingress').flatMap(
        (i) =>
          i.metadata.annotations?.['nginx.ingress.kubernetes.io/auth-response-headers']?.split(
            ',',
          ) ?? [],
      ),
      ...ofKind(objs, 'Middleware').flatMap((m) => m.spec.forwardAuth?.authResponseHeaders ?? []),
    ];
    if (overlay in FORWARD_AUTH)
      expect(copied).toEqual([
        'X-Tenant-Id',
        'X-Tenant-Type',
        'X-User-Id',
        'X-User-Email',
        'X-Scope',
        'X-Client-Id',
        'Authorization',
        'X-API-Key',
      ]);
    for (const ingress of ofKind(objs, 'Ingress'))
      for (const rule of ingress.spec.rules)
        for (const path of rule.http.paths)
          if (path.backend.service.name !== 'orders')
            expect(serviceNamed(path.backend.service.name)).toBeDefined();
  });

  it('every budget, policy, Service, monitor and autoscaler selects the gateway’s pods and nothing else; no replicas where an HPA scales', () => {
    // Issue 30: a PDB without a selector protected nothing, a NetworkPolicy
    // with `podSelector: {}` governed every pod of the namespace, and the
    // Deployment's `replicas` reset the HPA's count at every apply.
    expect(selectionProblems(objects())).toEqual([]);
  });

  it('bounds the gateway’s memory: a limit, V8’s old space as a share of it, a fixed bcrypt pool', async () => {
    // Issue 30: what grows with the machine rather than the load (the young
    // generation, one bcrypt thread per core of the node) is fixed, and V8
    // collects before the limit is reached (docs/deploying.md, "Memory").
    const container = gatewayContainer(objects()) as Container & {
      env: { name: string; value?: string }[];
      resources: { requests: { memory: string }; limits: { memory: string } };
    };
    const mib = (q: string) => Number(/^(\d+)Mi$/.exec(q)?.[1]);
    expect(mib(container.resources.limits.memory)).toBeGreaterThanOrEqual(
      mib(container.resources.requests.memory),
    );
    const nodeOptions = container.env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
    const share = Number(/--max-old-space-size-percentage=(\d+)/.exec(nodeOptions)?.[1]);
    expect(share).toBeGreaterThan(0);
    expect(share).toBeLessThanOrEqual(50);
    expect((await renderedConfig(objects())).passwords.workers).toBeGreaterThan(0);
  });

  it('no Service exposes the admin port', () => {
    for (const service of ofKind(objects(), 'Service'))
      for (const p of service.spec.ports) {
        expect(p.port).not.toBe(ADMIN_PORT);
        expect([ADMIN_PORT, 'admin']).not.toContain(p.targetPort);
      }
  });

  it('the NetworkPolicy admits the admin port only from the monitoring namespace, forward-auth only from the ingress’s', () => {
    const policy = one(objects(), 'NetworkPolicy');
    expect(policy.spec.policyTypes).toEqual(['Ingress']);
    const fromOf = (port: string) =>
      (policy.spec.ingress as { ports: { port: string }[]; from?: unknown[] }[])
        .filter((r) => r.ports.some((p) => p.port === port))
        .map((r) => r.from);
    const namespace = (name: string) => [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } },
    ];
    expect(fromOf('admin')).toEqual([namespace('monitoring')]);
    const ingress = FORWARD_AUTH[overlay];
    if (ingress !== undefined) {
      expect(fromOf('forward-auth')).toEqual([namespace(ingress)]);
      expect(fromOf('http')).toEqual([namespace(ingress)]);
    }
  });

  it('every container runs non-root, read-only, without capabilities; the pod without a service account token', () => {
    const pod = podOf(objects());
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    for (const c of containersOf(objects())) {
      expect(c.securityContext, c.name).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(
        (c as { resources?: { requests?: unknown } }).resources?.requests,
        c.name,
      ).toBeDefined();
    }
  });

  it('the PrometheusRule holds the alert rules of deploy/prometheus, unchanged', () => {
    const rules = parse(
      readFileSync(join(ROOT, 'deploy/prometheus/tenant-gateway-alerts.yaml'), 'utf8'),
    );
    expect(one(objects(), 'PrometheusRule').spec).toEqual(rules);
  });

  it('Traefik: no deprecated trustForwardHeader', () => {
    for (const m of ofKind(objects(), 'Middleware'))
      expect(m.spec.forwardAuth).not.toHaveProperty('trustForwardHeader');
  });
});

/**
 * Issue 30: the supported way to deploy — a kustomization of the
 * operator's own naming an overlay as a resource, with patches — exactly as
 * docs/deploying.md writes it, laid out as it says (this repository beside
 * the operator's folder, in a temporary folder outside deploy/), rendered
 * by plain `kubectl kustomize` (no --load-restrictor).
 */
describe('your own kustomization naming an overlay, as docs/deploying.md shows it', () => {
  const docs = readFileSync(join(ROOT, 'docs/deploying.md'), 'utf8');
  /** The text of the fenced YAML block whose first line is `# <title>`. */
  const block = (title: string): string => {
    const found = [...docs.matchAll(/^```yaml\n# ([^\n]+)\n([\s\S]*?)^```$/gm)].find(
      (m) => m[1] === title,
    );
    if (found === undefined) throw new Error(`docs/deploying.md: no yaml block "# ${title}"`);
    return found[2] as string;
  };
  const own = join(temp, 'your-deploy-repo/apps/tenant-gateway');
  let kustomization: string;
  let overlayYaml: string;
  beforeAll(() => {
    mkdirSync(own, { recursive: true });
    symlinkSync(ROOT, join(temp, 'your-deploy-repo/tenant-gateway'));
    kustomization = block('apps/tenant-gateway/kustomization.yaml');
    overlayYaml = block('apps/tenant-gateway/overlay.yaml');
    writeFileSync(join(own, 'overlay.yaml'), overlayYaml);
  });
  const renderWith = (text: string): Obj[] => {
    writeFileSync(join(own, 'kustomization.yaml'), text);
    return render(own);
  };

  it('renders from outside deploy/ with every patch applied, and the gateway’s objects stay scoped to its pods', async () => {
    expect(kustomization).toContain('- ../../tenant-gateway/deploy/kustomize/overlays/gateway');
    const objs = renderWith(kustomization);
    await expectValidObjects(objs);
    const container = gatewayContainer(objs) as Container & {
      image: string;
      resources: { requests: Record<string, string>; limits: Record<string, string> };
    };
    expect(container.image).toBe('registry.internal/platform/tenant-gateway:0.1.0');
    expect(one(objs, 'HorizontalPodAutoscaler').spec.maxReplicas).toBe(20);
    // A strategic merge by container name: the request changed, the rest kept.
    expect(container.resources.requests.cpu).toBe('500m');
    expect(container.resources.limits.memory).toBe(
      (
        (parse(readFileSync(join(KUSTOMIZE, 'base/deployment.yaml'), 'utf8')) as Obj).spec.template
          .spec.containers[0] as { resources: { limits: { memory: string } } }
      ).resources.limits.memory,
    );
    // Your overlay.yaml replaced the overlay's; the shared layer is the package's.
    const configMap = one(objs, 'ConfigMap');
    expect(configMap.data?.['overlay.yaml']).toBe(overlayYaml);
    expect(configMap.data?.['gateway.yaml']).toBe(
      readFileSync(join(KUSTOMIZE, 'base/gateway.yaml'), 'utf8'),
    );
    const volume = podOf(objs).volumes.find((v: { name: string }) => v.name === 'config');
    expect(volume.configMap.name).toBe(configMap.metadata.name);
    const config = await renderedConfig(objs);
    expect(config.routes.map((r) => r.prefix)).toEqual(['/billing']);
    expect(selectionProblems(objs)).toEqual([]);
  });

  it('the docs’ egress policy, added beside the overlay, passes the schema and selects the gateway’s pods only', async () => {
    writeFileSync(join(own, 'egress.yaml'), block('apps/tenant-gateway/egress.yaml'));
    const base = parse(kustomization) as { resources: string[] };
    const objs = renderWith(stringify({ ...base, resources: [...base.resources, 'egress.yaml'] }));
    await expectValidObjects(objs);
    expect(selectionProblems(objs)).toEqual([]);
    const egress = one(objs, 'NetworkPolicy', 'tenant-gateway-egress');
    expect(egress.spec.policyTypes).toEqual(['Egress']);
    // DNS is listed: an egress policy refuses every destination it does not name.
    const ports = (egress.spec.egress as { ports: { protocol: string; port: number }[] }[]).flatMap(
      (rule) => rule.ports,
    );
    expect(ports).toContainEqual({ protocol: 'UDP', port: 53 });
  });

  it('with the Sentinel component and the docs’ patch, the store layer is the operator’s', async () => {
    const base = parse(kustomization) as { patches: unknown[] };
    const sentinel = parse(block('in apps/tenant-gateway/kustomization.yaml')) as {
      components: string[];
      patches: unknown[];
    };
    const objs = renderWith(
      stringify({
        ...base,
        components: sentinel.components,
        patches: [...base.patches, ...sentinel.patches],
      }),
    );
    await expectValidObjects(objs);
    const config = await renderedConfig(objs);
    expect(config.store.redis?.url).toBeUndefined();
    expect(config.store.redis?.sentinel?.name).toBe('payments');
    expect(config.store.redis?.sentinel?.nodes).toHaveLength(3);
  });
});
