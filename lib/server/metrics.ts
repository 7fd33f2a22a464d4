/** The web process's Prometheus registry: one per server context (per process in production). */
import type { Registry } from 'prom-client';
import { createMetricsRegistry } from '../metrics/registry';
import { createMetricsSource } from '../metrics/source';
import { type ServerContext, serverContext } from './context';

const registries = new WeakMap<ServerContext, Registry>();

export function metricsRegistry(): Registry {
  const ctx = serverContext();
  let registry = registries.get(ctx);
  if (!registry) {
    registry = createMetricsRegistry(createMetricsSource({ db: ctx.readPool, doorbell: ctx.doorbell, leaseMs: ctx.cfg.leaseMs }));
    registries.set(ctx, registry);
  }
  return registry;
}
