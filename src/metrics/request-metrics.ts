/**
 * Every answered request's count and latency, kept in plain numbers on the request path and read
 * by prom-client only when Prometheus scrapes. prom-client's own `inc()` and `observe()` hash their
 * labels and validate them on every call, a measurable part of a cached answer's cost
 * (`npm run bench:http-cache`); here a request costs two map reads, a short bucket search and
 * three additions.
 */
import type client from 'prom-client';

/** Upper bounds of the latency buckets, seconds. */
const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;

type Latency = { buckets: Float64Array; sum: number; count: number };

export type RequestMetrics = {
  /** one answered request: its label (host kind), status and its latency in seconds */
  record(kind: string, status: number, seconds: number): void;
};

/**
 * Registers `platform_http_requests_total` (by host_kind and status) and
 * `platform_http_request_duration_seconds` (by host_kind) in `registry`.
 */
export function createRequestMetrics(registry: client.Registry): RequestMetrics {
  const counts = new Map<string, Map<number, number>>();
  const latencies = new Map<string, Latency>();

  type Value = { labels: Record<string, string | number>; value: number; metricName?: string };
  /** A metric of the registry's own shape: what prom-client's metrics give it on a scrape. */
  const register = (
    name: string,
    help: string,
    type: 'counter' | 'histogram',
    values: () => Value[],
    reset: () => void,
  ) =>
    registry.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }),
      reset,
    } as unknown as client.Metric);

  register(
    'platform_http_requests_total',
    'HTTP requests answered, by host kind (api, console, docs, app, custom: a slug or custom domain) and status',
    'counter',
    () =>
      [...counts].flatMap(([kind, byStatus]) =>
        [...byStatus].map(([status, value]) => ({
          labels: { host_kind: kind, status: String(status) },
          value,
        })),
      ),
    () => counts.clear(),
  );

  // prom-client's Histogram can only be fed one observation at a time: its buckets are given here
  const name = 'platform_http_request_duration_seconds';
  register(
    name,
    'Time to the response head, by host kind (a streamed body may go on after it)',
    'histogram',
    () =>
      [...latencies].flatMap(([kind, l]): Value[] => {
        let cumulative = 0;
        return [
          ...LATENCY_BUCKETS.map((le, i) => ({
            labels: { host_kind: kind, le },
            value: (cumulative += l.buckets[i]!),
            metricName: `${name}_bucket`,
          })),
          { labels: { host_kind: kind, le: '+Inf' }, value: l.count, metricName: `${name}_bucket` },
          { labels: { host_kind: kind }, value: l.sum, metricName: `${name}_sum` },
          { labels: { host_kind: kind }, value: l.count, metricName: `${name}_count` },
        ];
      }),
    () => latencies.clear(),
  );

  return {
    record(kind, status, seconds) {
      let byStatus = counts.get(kind);
      if (!byStatus) counts.set(kind, (byStatus = new Map()));
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      let l = latencies.get(kind);
      if (!l)
        latencies.set(
          kind,
          (l = { buckets: new Float64Array(LATENCY_BUCKETS.length), sum: 0, count: 0 }),
        );
      let i = 0;
      while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
      if (i < LATENCY_BUCKETS.length) l.buckets[i] = l.buckets[i]! + 1;
      l.sum += seconds;
      l.count++;
    },
  };
}
