/**
 * Issue 30: the check test/deploy/kustomize.test.ts runs on every render,
 * on objects made here, so that each kind of wrong selection is seen to be
 * caught — also those no overlay renders today (a ServiceMonitor, a monitor
 * of every namespace, a selector of a kind the check has no rule for).
 */
import { describe, expect, it } from 'vitest';
import { selectionProblems, type Rendered } from './pod-selection.js';

const ns = 'apps';
const GATEWAY = { 'app.kubernetes.io/name': 'tenant-gateway' };
const deployment = (name: string, labels: Record<string, string>, images: string[], spec = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec: {
    ...spec,
    selector: { matchLabels: labels },
    template: {
      metadata: { labels: { ...labels, 'pod-template-hash': 'x' } },
      spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
    },
  },
});
const object = (kind: string, spec: unknown, labels?: Record<string, string>): Rendered => ({
  apiVersion: 'v1',
  kind,
  metadata: { name: kind.toLowerCase(), namespace: ns, ...(labels ? { labels } : {}) },
  spec,
});
const gateway = deployment('tenant-gateway', GATEWAY, [
  'registry.example.com/tenant-gateway:0.1.0',
]);
const orders = deployment('orders', { 'app.kubernetes.io/name': 'orders' }, ['orders:1']);
const hpa = (name: string) =>
  object('HorizontalPodAutoscaler', {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
  });
const scoped = [
  object('PodDisruptionBudget', { selector: { matchLabels: GATEWAY } }),
  object('NetworkPolicy', { podSelector: { matchLabels: GATEWAY } }),
  object('Service', { selector: GATEWAY }, GATEWAY),
  object('PodMonitor', { selector: { matchLabels: GATEWAY } }),
  object('ServiceMonitor', { selector: { matchLabels: GATEWAY } }),
  hpa('tenant-gateway'),
];

describe('the selection check', () => {
  it('passes objects scoped to the gateway’s pods, beside another app’s, in the sidecar layout too', () => {
    expect(selectionProblems([gateway, orders, ...scoped])).toEqual([]);
    const sidecar = deployment('orders', GATEWAY, ['orders:1', 'tenant-gateway:0.1.0']);
    expect(selectionProblems([sidecar, ...scoped.slice(0, -1), hpa('orders')])).toEqual([]);
  });

  it('catches a budget without a selector, a policy of the whole namespace, and replicas beside an HPA', () => {
    expect(
      selectionProblems([
        { ...gateway, spec: { ...gateway.spec, replicas: 2 } },
        orders,
        object('PodDisruptionBudget', { minAvailable: 1 }),
        object('NetworkPolicy', { podSelector: {} }),
        hpa('tenant-gateway'),
      ]),
    ).toEqual([
      'PodDisruptionBudget poddisruptionbudget has no selector: it selects no pod',
      'NetworkPolicy networkpolicy selects {}: wider than the pods of Deployment tenant-gateway ({"matchLabels":{"app.kubernetes.io/name":"tenant-gateway"}})',
      'NetworkPolicy networkpolicy also selects a pod labelled app.kubernetes.io/name=not-tenant-gateway',
      'NetworkPolicy networkpolicy also selects the pods of Deployment orders',
      'Deployment tenant-gateway sets replicas: 2 while HorizontalPodAutoscaler horizontalpodautoscaler scales it (every apply resets the count)',
    ]);
  });

  it('catches an HPA of another workload, a monitor of every namespace, a ServiceMonitor through a wide Service, an unknown selecting kind', () => {
    expect(
      selectionProblems([
        gateway,
        orders,
        hpa('orders'),
        object('PodMonitor', {
          selector: { matchLabels: GATEWAY },
          namespaceSelector: { any: true },
        }),
        object('ServiceMonitor', { selector: { matchLabels: { team: 'x' } } }),
        object('Widget', { selector: { matchLabels: GATEWAY } }),
      ]),
    ).toEqual([
      'HorizontalPodAutoscaler horizontalpodautoscaler scales Deployment orders, not a gateway workload in apps',
      'PodMonitor podmonitor: namespaceSelector {"any":true} reaches beyond one namespace',
      'ServiceMonitor servicemonitor selects no Service',
      'Widget widget has selector: no rule here says what it selects',
    ]);
    const wide = object('Service', { selector: { 'pod-template-hash': 'x' } }, { team: 'x' });
    expect(
      selectionProblems([
        gateway,
        wide,
        object('ServiceMonitor', { selector: { matchLabels: { team: 'x' } } }),
      ]),
    ).toContain(
      'ServiceMonitor servicemonitor through Service service selects {"matchLabels":{"pod-template-hash":"x"}}: wider than the pods of Deployment tenant-gateway ({"matchLabels":{"app.kubernetes.io/name":"tenant-gateway"}})',
    );
  });
});
