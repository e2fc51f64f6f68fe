/**
 * Which pods the objects of a rendered package select (issue 30): every
 * object that selects pods — PodDisruptionBudget, NetworkPolicy, Service,
 * PodMonitor, ServiceMonitor (through the Services it picks) — and every
 * HorizontalPodAutoscaler's target is checked against the gateway's pods,
 * found as the pod templates that run the gateway's image (in the sidecar
 * overlay, the app's pods with the gateway beside it). A selector passes
 * when it matches those pods' labels and is at least as narrow as their
 * workload's own selector, so it can match no pod the workload does not own:
 * `{}` and a missing selector fail, whatever else runs in the namespace.
 * An object of any other kind that carries a selector fails too, until a
 * rule here says what it must select.
 */

/** A Kubernetes label selector (metav1.LabelSelector). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** A rendered object, as far as selection goes. */
export interface Rendered {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
}

/** A workload's pods: its template's labels, and the selector by which it owns them. */
interface PodSet {
  workload: Rendered;
  labels: Record<string, string>;
  selector: LabelSelector;
  gateway: boolean;
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']);

/** Whether `selector` matches a pod labelled `labels`; undefined matches nothing (policy/v1). */
export function selects(selector: LabelSelector | undefined, labels: Record<string, string>) {
  if (selector === undefined || selector === null) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (labels[key] !== value) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        return has && values.includes(labels[key] as string);
      case 'NotIn':
        return !has || !values.includes(labels[key] as string);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        throw new Error(`unknown selector operator ${operator}`);
    }
  });
}

/**
 * Whether every pod `narrow` matches is one `wide` matches too: each
 * requirement of `wide` is one of `narrow`'s (a label `k=v` also as
 * `k In [v]`).
 */
function within(narrow: LabelSelector, wide: LabelSelector): boolean {
  const requires = (key: string, value: string) =>
    narrow.matchLabels?.[key] === value ||
    (narrow.matchExpressions ?? []).some(
      (e) =>
        e.key === key && e.operator === 'In' && e.values?.length === 1 && e.values[0] === value,
    );
  return (
    Object.entries(wide.matchLabels ?? {}).every(([k, v]) => requires(k, v)) &&
    (wide.matchExpressions ?? []).every((w) =>
      (narrow.matchExpressions ?? []).some((n) => JSON.stringify(n) === JSON.stringify(w)),
    )
  );
}

const imageRepository = (image: string) =>
  (image.split('@')[0] as string)
    .replace(/:[^/]*$/, '')
    .split('/')
    .at(-1);

function podSets(objects: Rendered[]): PodSet[] {
  return objects
    .filter((o) => WORKLOADS.has(o.kind))
    .map((workload) => ({
      workload,
      labels: workload.spec.template.metadata?.labels ?? {},
      selector: workload.spec.selector,
      gateway: (workload.spec.template.spec.containers as { image: string }[]).some(
        (c) => imageRepository(c.image) === 'tenant-gateway',
      ),
    }));
}

/**
 * What is wrong with the selection of the gateway's pods in `objects`: one
 * line per object that selects other pods, or none, or not all of the
 * gateway's; empty when every object selects exactly the gateway's pods.
 */
export function selectionProblems(objects: Rendered[]): string[] {
  const problems: string[] = [];
  const pods = podSets(objects);
  const gateway = pods.filter((p) => p.gateway);
  if (gateway.length === 0) return ['no workload runs the tenant-gateway image'];
  const namespaceOf = (o: Rendered) => o.metadata.namespace ?? 'default';
  const named = (o: Rendered) => `${o.kind} ${o.metadata.name}`;

  /** `selector`, held by `owner` in `namespace`, against the gateway's pods and every other. */
  const check = (owner: string, namespace: string, selector: LabelSelector | undefined) => {
    const mine = gateway.filter((p) => namespaceOf(p.workload) === namespace);
    if (mine.length === 0) problems.push(`${owner}: no gateway pods in ${namespace}`);
    if (selector === undefined || selector === null)
      return void problems.push(`${owner} has no selector: it selects no pod`);
    for (const p of mine) {
      if (!selects(selector, p.labels))
        problems.push(`${owner} does not select the pods of ${named(p.workload)}`);
      // Narrower than the workload's own selector: it can pick up no pod the
      // workload does not own, whatever else is in the namespace.
      if (!within(selector, p.selector))
        problems.push(
          `${owner} selects ${JSON.stringify(selector)}: wider than the pods of ${named(p.workload)} (${JSON.stringify(p.selector)})`,
        );
      // A neighbour: the same pod labels but another app's value for each
      // label the workload selects by (another app of the namespace).
      for (const key of Object.keys(p.selector.matchLabels ?? {})) {
        const neighbour = { ...p.labels, [key]: `not-${p.labels[key]}` };
        if (selects(selector, neighbour))
          problems.push(`${owner} also selects a pod labelled ${key}=${neighbour[key]}`);
      }
    }
    for (const other of pods.filter((p) => !p.gateway && namespaceOf(p.workload) === namespace))
      if (selects(selector, other.labels))
        problems.push(`${owner} also selects the pods of ${named(other.workload)}`);
  };

  for (const obj of objects) {
    const spec = obj.spec ?? {};
    const ns = namespaceOf(obj);
    switch (obj.kind) {
      case 'PodDisruptionBudget':
        check(named(obj), ns, spec.selector);
        break;
      case 'NetworkPolicy':
        check(named(obj), ns, spec.podSelector);
        break;
      case 'Service':
        check(named(obj), ns, spec.selector && { matchLabels: spec.selector });
        break;
      case 'PodMonitor':
        check(named(obj), monitoredNamespace(obj, problems), spec.selector);
        break;
      case 'ServiceMonitor': {
        const services = objects.filter(
          (s) =>
            s.kind === 'Service' &&
            namespaceOf(s) === monitoredNamespace(obj, problems) &&
            selects(spec.selector, s.metadata.labels ?? {}),
        );
        if (services.length === 0) problems.push(`${named(obj)} selects no Service`);
        for (const s of services)
          check(`${named(obj)} through ${named(s)}`, namespaceOf(s), {
            matchLabels: s.spec.selector,
          });
        break;
      }
      case 'HorizontalPodAutoscaler': {
        const { apiVersion, kind, name } = spec.scaleTargetRef;
        const target = gateway.find(
          (p) =>
            p.workload.apiVersion === apiVersion &&
            p.workload.kind === kind &&
            p.workload.metadata.name === name &&
            namespaceOf(p.workload) === ns,
        );
        if (target === undefined)
          problems.push(`${named(obj)} scales ${kind} ${name}, not a gateway workload in ${ns}`);
        else if (target.workload.spec.replicas !== undefined)
          problems.push(
            `${named(target.workload)} sets replicas: ${target.workload.spec.replicas} while ${named(obj)} scales it (every apply resets the count)`,
          );
        break;
      }
      default: {
        const keys = ['selector', 'podSelector', 'scaleTargetRef'].filter((k) => k in spec);
        if (!WORKLOADS.has(obj.kind) && keys.length > 0)
          problems.push(`${named(obj)} has ${keys.join(', ')}: no rule here says what it selects`);
      }
    }
  }
  return problems;
}

/** The one namespace a Prometheus Operator monitor looks in (its own unless it names one). */
function monitoredNamespace(monitor: Rendered, problems: string[]): string {
  const own = monitor.metadata.namespace ?? 'default';
  const selector = monitor.spec?.namespaceSelector as
    { any?: boolean; matchNames?: string[] } | undefined;
  if (selector === undefined || (selector.any !== true && selector.matchNames === undefined))
    return own;
  if (selector.any !== true && selector.matchNames?.length === 1)
    return selector.matchNames[0] as string;
  problems.push(
    `${monitor.kind} ${monitor.metadata.name}: namespaceSelector ${JSON.stringify(selector)} reaches beyond one namespace`,
  );
  return own;
}
