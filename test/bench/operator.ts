// Benchmark: 1,000 PassthroughModels created at once; time until the operator reports every one
// Ready, side by side with a plain client that server-side applies the same objects the operator
// generates (model, API-key Secret and ConfigMap, eight gateway objects each) at the same
// concurrency: the API server's own limit here. Reports the ratio and the operator's peak RSS
// (VmHWM of the operator process; it runs under ts-node, whose compiler is part of that figure,
// so the idle RSS before any model is reported too).
// Bounded: a private control plane (apiserver mode), 1,000 models, at most 15 minutes.
import * as fs from 'node:fs';
import { startControlPlane } from '../support/control-plane';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { desiredGatewayObjects } from '../../src/translate/gateway';
import { desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../../src/translate/keys/api-keys';
import type { PassthroughModel } from '../../src/api/passthroughmodel';
import { installGatewayCRDs, installOwnCRDs, passthroughModel, providerCredential, startOperator } from '../integration/operator-support';

const MODELS = Number(process.env.NLS_BENCH_MODELS ?? 1000);
const CONCURRENCY = 16;
const gateway = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari' } };

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

function rssKiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
}

/** What the operator ends up applying for one model, applied by a plain client. */
function generatedObjects(model: KubeObject): KubeObject[] {
  const ref = { kind: 'PassthroughModel' as const, name: model.metadata.name, namespace: model.metadata.namespace! };
  const translation = desiredGatewayObjects(model as unknown as PassthroughModel, gateway);
  if (translation.errors.length) throw new Error(translation.errors.map((e) => e.message).join('; '));
  return [model, desiredApiKeySecret(ref), desiredApiKeyMetadataConfigMap(ref), ...(translation.objects as unknown as KubeObject[])];
}

export async function run(): Promise<Record<string, number | string>> {
  const plane = await startControlPlane({ mode: 'apiserver' });
  const client = new KubeRest(plane.kubeConfig());
  let operator: ReturnType<typeof startOperator> | undefined;
  try {
    await installOwnCRDs(plane.kubeConfig());
    await installGatewayCRDs(plane.kubeConfig());
    for (const ns of ['warmup', 'baseline', 'operator']) {
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { fieldManager: 'bench' });
      await client.create(providerCredential(ns), { fieldManager: 'bench' });
    }
    const names = Array.from({ length: MODELS }, (_, i) => `bench-${String(i).padStart(4, '0')}`);

    // Warm-up: the first write of each kind compiles its schema in the API server; neither side pays for it.
    for (let i = 0; i < 20; i++) for (const obj of generatedObjects(passthroughModel('warmup', `w${i}`))) await client.apply(obj, { fieldManager: 'bench-warmup', force: true });

    // Plain client: server-side apply of the same objects, CONCURRENCY models at a time.
    const baselineObjects = names.map((n) => generatedObjects(passthroughModel('baseline', n)));
    const t0 = Date.now();
    await pool(baselineObjects, CONCURRENCY, async (objects) => {
      for (const obj of objects) await client.apply(obj, { fieldManager: 'bench-baseline', force: true });
    });
    const baselineSeconds = (Date.now() - t0) / 1000;
    const objectsPerModel = baselineObjects[0].length;

    // The operator: the models are created at once; the clock stops when all are Ready.
    operator = startOperator({ kubeconfigPath: plane.kubeconfigPath, namespace: 'operator', name: 'bench', leaderElection: true, env: { NLS_LOG_LEVEL: 'warn', NLS_WORKERS: String(CONCURRENCY) } });
    await operator.waitForLine(/"msg":"starting"|serving health/, 60_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 3000));
    const idleRssMiB = rssKiB(operator.child.pid!, 'VmRSS') / 1024;
    const t1 = Date.now();
    await pool(names, CONCURRENCY * 2, async (n) => {
      await client.create(passthroughModel('operator', n), { fieldManager: 'bench-user' });
    });
    const createdSeconds = (Date.now() - t1) / 1000;
    const deadline = Date.now() + 15 * 60_000;
    let ready = 0;
    while (ready < MODELS) {
      if (Date.now() > deadline) throw new Error(`only ${ready}/${MODELS} models Ready after 15 minutes`);
      if (operator.child.exitCode !== null) throw new Error(`operator exited: ${operator.lines.slice(-10).join('\n')}`);
      await new Promise((r) => setTimeout(r, 500));
      const { items } = await client.list<KubeObject & { status?: { phase?: string; observedGeneration?: number } }>('llm.nebari.dev/v1alpha1', 'PassthroughModel', { namespace: 'operator' });
      ready = items.filter((m) => m.status?.phase === 'Ready' && m.status.observedGeneration === m.metadata.generation).length;
    }
    const operatorSeconds = (Date.now() - t1) / 1000;
    const peakRssMiB = rssKiB(operator.child.pid!, 'VmHWM') / 1024;
    return {
      models: MODELS,
      'objects per model (model + keys Secret/ConfigMap + gateway)': objectsPerModel,
      'plain client SSA of the same objects, s': baselineSeconds,
      'plain client objects/s': (MODELS * objectsPerModel) / baselineSeconds,
      'operator: create all models, s': createdSeconds,
      'operator: until all Ready, s': operatorSeconds,
      'ratio operator / plain client': operatorSeconds / baselineSeconds,
      'operator idle RSS (ts-node), MiB': idleRssMiB,
      'operator peak RSS (VmHWM), MiB': peakRssMiB,
      concurrency: `${CONCURRENCY} (client) / ${CONCURRENCY} workers (operator)`,
    };
  } finally {
    if (operator && operator.child.exitCode === null) await operator.kill();
    client.close();
    await plane.stop();
  }
}

if (require.main === module) {
  run().then((f) => console.table(f), (e) => { console.error(e); process.exit(1); });
}
