// A small run of every benchmark in test/bench (tiny sizes), so they keep working as the code
// they drive changes. Nothing here is timed: it checks each benchmark produces its figures and
// that they are sane (finite, positive, the request counts consistent with the work done).
// `npm run bench` is the real measurement (docs/performance.md).
import { run as controlPlane } from '../bench/control-plane';
import { run as envoyUpstreamTls } from '../bench/envoy-upstream-tls';
import { run as operator } from '../bench/operator';
import { run as synth } from '../bench/synth';
import { run as translate } from '../bench/translate';
import { run as webhook } from '../bench/webhook';

const positive = (figures: Record<string, number | string>, key: string) => {
  expect(Object.keys(figures)).toContain(key);
  const value = figures[key];
  expect({ key, value, positive: typeof value === 'number' && Number.isFinite(value) && value > 0 }).toEqual({ key, value, positive: true });
  return value as number;
};

describe('benchmarks (smoke run, tiny sizes)', () => {
  it('operator: 3 models through the chart\'s webhooks, the plain client and the compiled operator each converge and are counted; a restart and a resync write nothing', async () => {
    const figures = await operator({ sizes: [3], node: 'current', webhooks: true });
    expect(figures.models).toBe(3);
    expect(figures["through the chart's webhooks (NLS_BENCH_WEBHOOKS)"]).toBe('yes, both sides');
    const objects = positive(figures, 'objects per model (model + keys Secret/ConfigMap + gateway)');
    // The plain client applies every object once (a lease renewal may land in the window).
    expect(positive(figures, 'plain client requests per model')).toBeGreaterThanOrEqual(objects);
    // The operator applies every generated object and writes status at least.
    const operatorRequests = figures['operator requests per model, by verb and resource'];
    expect(positive(figures, "operator requests per model (without the benchmark's create and polls)")).toBeGreaterThanOrEqual(objects);
    expect(operatorRequests).toMatch(/APPLY passthroughmodels\/status/);
    // The finalizer came with the CREATE (the mutating webhook): the operator never PATCHes a model.
    expect(operatorRequests).not.toMatch(/PATCH passthroughmodels /);
    positive(figures, 'operator: until all Ready, s');
    positive(figures, 'ratio operator / plain client');
    // The side that also sends the operator's status and Event: those two more per model, exactly, and no finalizer patch.
    const withWrites = positive(figures, "plain client with the operator's writes, requests per model");
    expect(withWrites).toBeGreaterThanOrEqual(objects + 2);
    const withWritesByVerb = figures["plain client with the operator's writes, requests per model, by verb and resource"];
    for (const write of [/APPLY passthroughmodels\/status 1\.00/, /POST events 1\.00/]) expect(withWritesByVerb).toMatch(write);
    expect(withWritesByVerb).not.toMatch(/PATCH passthroughmodels /);
    positive(figures, "ratio operator / plain client with the operator's writes");
    // The credential Secret comes from the operator's watch: no GET of it per model. The one GET of
    // a Secret left is the key Secret's ownership check, once per model per process (api-key-objects.ts).
    const secretGets = /GET secrets ([\d.]+)/.exec(operatorRequests as string);
    expect(Number(secretGets?.[1] ?? 0)).toBeLessThanOrEqual(1);
    positive(figures, 'operator peak RSS (VmHWM) through convergence, MiB');
    // Steady state: once converged, a resync passes every model again and sends nothing at all (issue 34).
    const resyncWrites = Object.keys(figures).find((k) => /^steady state, resync .*: writes per model$/.test(k));
    expect({ resyncWrites, value: resyncWrites && figures[resyncWrites] }).toEqual({ resyncWrites: expect.any(String), value: 0 });
    expect(figures['steady state, resync: requests per model, by verb and resource']).toBe('(none)');
    // A restart re-reads everything from its watches: no key object, status or Event, and no
    // gateway object stored as applied (each carries the digest and generation of our last apply;
    // operator-restart.test.ts counts exactly the repairs). A model is passed once more after its
    // own first publication, so the first convergence leaves no policy without a peer's key Secret.
    // Every object as stored before the restart is stored so after the resync (a failure names the object and the field).
    const changed = figures['steady state, restart and resync: objects changed (compared up to 100 models)'] as string;
    expect(changed).toMatch(/^\(none of \d+ objects\)$/);
    expect(Number(/\d+/.exec(changed)![0])).toBeGreaterThanOrEqual(3 * objects);
    const restartRequests = figures['steady state, restart: requests per model, by verb and resource'] as string;
    expect(restartRequests).not.toMatch(/APPLY|PATCH|POST|PUT|DELETE/);
    // Admission reads the models from its watches: no LIST or GET of models per model write.
    expect(operatorRequests).not.toMatch(/(LIST|GET) (llmmodels|passthroughmodels) [1-9]/);
  });

  it('webhook: both servers answer at every concurrency', async () => {
    const figures = await webhook(200, 1, { node: 'current' });
    for (const c of [1, 16, 64]) {
      for (const server of ['webhook', 'baseline', 'baseline-parse']) {
        expect(positive(figures, `c${c}_${server}_p99_ms`)).toBeGreaterThanOrEqual(figures[`c${c}_${server}_p50_ms`] as number);
        positive(figures, `c${c}_${server}_req_per_s`);
        expect(figures[`c${c}_${server}_server_cpu_us_per_request`]).toBeGreaterThanOrEqual(0);
      }
      positive(figures, `c${c}_throughput_ratio_webhook_to_baseline`);
      positive(figures, `c${c}_throughput_ratio_webhook_to_baseline-parse`);
    }
  });

  it('translate: renders the models it was given', async () => {
    const figures = await translate(20, 1);
    expect(positive(figures, 'objects generated')).toBeGreaterThanOrEqual(20);
    positive(figures, 'models per second');
  });

  it('synth: regenerates with and without static models', async () => {
    const figures = await synth(1, 3);
    positive(figures, 'npm run synth, 0 static models, median wall s');
    positive(figures, 'npm run synth, 3 static models, median wall s');
    positive(figures, 'models.yaml for 3 models, MiB');
  });

  it('envoy upstream TLS: one watch per distinct validation secret, none more for clusters sharing one, and none of its own for a bundle sent inline', async () => {
    const figures = await envoyUpstreamTls([1, 3]);
    // Each secret's file source is watched too (one per cluster): the system bundle's file adds one more.
    expect(figures['distinct: inotify instances per cluster']).toBe(2);
    expect(figures['shared: inotify instances per cluster']).toBe(0);
    expect(figures['ConfigMap: inotify instances per cluster']).toBe(1);
    positive(figures, 'distinct: heap per cluster, MiB');
    positive(figures, 'shared: heap per cluster, MiB');
    positive(figures, 'ConfigMap: heap per cluster, MiB');
    expect(figures['ratio heap per cluster, ConfigMap / distinct']).toBeLessThan(0.5);
  });

  it('control plane: starts in both modes', async () => {
    const figures = await controlPlane(1);
    positive(figures, 'control plane start, apiserver mode, median s');
    positive(figures, 'control plane start, cluster mode, median s');
  });
});
