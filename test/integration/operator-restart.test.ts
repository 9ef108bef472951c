// A restarted operator and the gateway objects it generated (issue 34): each carries the digest of
// the body applied and the generation that apply produced (src/translate/applied-digest.ts,
// src/operator/runtime/apply.ts), so a new process sends no apply for an object stored as it would
// apply it, and still repairs what someone changed while it was down, including a removal, which
// leaves no trace in managedFields (only the generation says so), and a label removal, which does
// not change the generation.
import { applyObject, createNamespace, kubeConfig, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { diffCounts, openWatches, requestCounts } from '../support/apiserver-requests';
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { ANNOTATION_APPLIED_DIGEST, ANNOTATION_APPLIED_GENERATION } from '../../src/translate/applied-digest';
import { OperatorProcess, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, passthroughModel, providerCredential, startOperator } from './operator-support';

const ns = uniqueName('op-restart');
let operator: OperatorProcess | undefined;
let client: KubeRest;

const getModel = (name: string) => client.get(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', name, ns));
const route = (name: string) => client.get<KubeObject & { spec: { hostnames?: string[] } }>(objectRef('aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', name, ns));
const policy = (name: string) => client.get<KubeObject>(objectRef('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', name, ns));
const generatedKinds = [
  ['gateway.envoyproxy.io/v1alpha1', 'Backend'],
  ['gateway.networking.k8s.io/v1', 'BackendTLSPolicy'],
  ['aigateway.envoyproxy.io/v1beta1', 'AIServiceBackend'],
  ['aigateway.envoyproxy.io/v1beta1', 'BackendSecurityPolicy'],
  ['gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy'],
  ['aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute'],
] as const;
/** Every generated gateway object of the namespace's models. */
const generated = async () => (await Promise.all(generatedKinds.map(([v, k]) => client.list(v, k, { namespace: ns })))).flatMap((l) => l.items);
/** Writes the API server served, by `VERB resource`, leaving out leader election and reads. */
// The API server's counters have no user label: Leases and Events are written by the shared
// control plane too (its scheduler and controller-manager fold repeated Events by PATCH), so they
// are left out here and the operator's Events are read from its namespace instead.
const writes = (counts: Map<string, number>) => Object.fromEntries([...counts].filter(([key]) => /^(APPLY|PATCH|POST|PUT|DELETE) /.test(key) && !/ (leases|events)$/.test(key)));
/** The Events of the test namespace (only the operator writes there), by name with their count. */
const namespaceEvents = async () => new Map((await client.list<KubeObject & { count?: number }>('v1', 'Event', { namespace: ns })).items.map((e) => [e.metadata.name, e.count ?? 1]));
/** The resources whose watches the test counts. */
const WATCHED = ['securitypolicies', 'aigatewayroutes', 'backendtrafficpolicies', 'httproutes', 'passthroughmodels', 'llmmodels'];
const start = (name: string) => startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name });
/** Passes the operator finished over PassthroughModels, from its own metrics. */
const passes = async (op: OperatorProcess) =>
  (await op.metrics())
    .split('\n')
    .filter((l) => l.startsWith('nls_reconcile_total{') && l.includes('kind="PassthroughModel"'))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);

beforeAll(async () => {
  await installOwnCRDs();
  await installGatewayCRDs();
  await createNamespace(ns);
  await applyObject(providerCredential(ns));
  client = new KubeRest(kubeConfig());
  // The controller-manager's garbage collector starts watching a newly installed kind at its next
  // discovery sync (every 30 s): waited for here, so its watches are not counted as the operator's.
  await waitFor('the garbage collector watches the kinds counted below', async () => {
    const open = await openWatches(client);
    return WATCHED.every((r) => (open.get(r) ?? 0) >= 1);
  }, { timeoutMs: 90_000 });
}, 180_000);

afterAll(async () => {
  if (operator?.child.exitCode === null) await operator.kill();
  client?.close();
});

it('writes nothing on a restart for objects stored as applied, and repairs a removal and a label edit made while it was down', async () => {
  operator = start('restart-1');
  for (const name of ['kept', 'edited']) await applyObject(passthroughModel(ns, name));
  await waitFor('both models Ready', async () => isReadyAtGeneration(await getModel('kept')) && isReadyAtGeneration(await getModel('edited')), { timeoutMs: 90_000 });
  // Every generated object records the digest of its body and the generation our apply produced.
  await waitFor('every generated object recorded as applied', async () => {
    const objects = await generated();
    return objects.length === 16 && objects.every((o) => o.metadata.annotations?.[ANNOTATION_APPLIED_DIGEST] && o.metadata.annotations[ANNOTATION_APPLIED_GENERATION] === String(o.metadata.generation));
  });
  await operator.stop();
  const watchesWithoutOperator = await openWatches(client);

  // While it is down: a JSON patch removes the route's hostnames (no managedFields entry is left
  // for the remover) and another removes one of the policy's labels (the generation stays).
  const patch = (path: string, ops: unknown[]) => client.request('PATCH', path, { body: ops, contentType: 'application/json-patch+json', query: { fieldManager: 'someone-else' } });
  await patch(`/apis/aigateway.envoyproxy.io/v1beta1/namespaces/${ns}/aigatewayroutes/edited-external`, [{ op: 'remove', path: '/spec/hostnames' }]);
  await patch(`/apis/gateway.envoyproxy.io/v1alpha1/namespaces/${ns}/securitypolicies/edited-external-auth`, [{ op: 'remove', path: '/metadata/labels/llm.nebari.dev~1endpoint' }]);
  const edited = (await route('edited-external'))!;
  expect(edited.spec.hostnames).toBeUndefined();
  expect((edited.metadata.managedFields as { manager?: string }[] | undefined)?.map((f) => f.manager)).not.toContain('someone-else');

  const before = await requestCounts(client);
  const eventsBefore = await namespaceEvents();
  operator = start('restart-2');
  await waitFor('the removal repaired', async () => (await route('edited-external'))?.spec.hostnames !== undefined, { timeoutMs: 60_000 });
  await waitFor('the label repaired', async () => (await policy('edited-external-auth'))?.metadata.labels?.['llm.nebari.dev/endpoint'] === 'external', { timeoutMs: 60_000 });
  // Both models passed (models seen converged at start-up are spread over 5 s).
  await waitFor('both models passed by the new process', async () => (await passes(operator!)) >= 2, { timeoutMs: 60_000 });
  const sent = writes(diffCounts(before, await requestCounts(client)));
  // The two repairs, and nothing else: no other gateway object, key object, status or Event.
  expect(sent).toEqual({ 'APPLY aigatewayroutes': 1, 'APPLY securitypolicies': 1 });
  expect(await namespaceEvents()).toEqual(eventsBefore);
  const repaired = (await route('edited-external'))!;
  expect(repaired.metadata.annotations?.[ANNOTATION_APPLIED_GENERATION]).toBe(String(repaired.metadata.generation));

  // One watch per kind and cache shape for the whole process (src/operator/runtime/shared-informers.ts):
  // the two model controllers share their watches of the generated kinds, and of each other's
  // models (each kind: its controller's own watch, and one of what endpoint membership needs).
  const running = await openWatches(client);
  // The HTTPRoutes: one watch for Programmed and for the order of the endpoint's routes (endpoint-peers.ts).
  const operatorWatches = Object.fromEntries(WATCHED.map((r) => [r, (running.get(r) ?? 0) - (watchesWithoutOperator.get(r) ?? 0)]));
  expect(operatorWatches).toEqual({ securitypolicies: 1, aigatewayroutes: 1, backendtrafficpolicies: 1, httproutes: 1, passthroughmodels: 2, llmmodels: 2 });
}, 240_000);
