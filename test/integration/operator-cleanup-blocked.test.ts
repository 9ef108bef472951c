// A model deletion that cannot finish because Envoy AI Gateway's controller is absent, on the real
// API server (cluster mode: garbage collection runs) with the pinned upstream CRDs and the
// operator as a process. The test stands in for the AI Gateway controller having run earlier:
// its finalizer on the objects it handles and the HTTPRoute it generates from a route. The route
// is then deleted by something else before the model (the namespace controller deleting the
// namespace, or `kubectl delete`): in background mode its HTTPRoute can only go once the route is
// gone, which the AI Gateway finalizer prevents. After the bound the model reports
// CleanupBlocked naming the route and the finalizer, keeps waiting (the route's auth policy stays),
// and never removes the finalizer; once an admin removes it with the command the message shows,
// the model goes. Foreign finalizers on the objects the operator deletes also stay.
import { applyObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject, objectRef } from '../../src/kube/rest';
import { OperatorProcess, condition, isReadyAtGeneration, passthroughModel, startOperator, prepareOperatorNamespace } from './operator-support';

const ns = uniqueName('op-blocked');
const AI_GATEWAY_FINALIZER = 'aigateway.envoyproxy.io/finalizer';
const BOUND_SECONDS = 4;
const AIGW = 'aigateway.envoyproxy.io/v1beta1';
const ref = (apiVersion: string, kind: string, name: string) => objectRef(apiVersion, kind, name, ns);
const model = ref('llm.nebari.dev/v1alpha1', 'PassthroughModel', 'gpt');
const route = (endpoint: string) => ref(AIGW, 'AIGatewayRoute', `gpt-${endpoint}`);
const httpRoute = (endpoint: string) => ref('gateway.networking.k8s.io/v1', 'HTTPRoute', `gpt-${endpoint}`);
// Everything Envoy AI Gateway puts its finalizer on, among the model's objects.
const handledByAIGateway = [route('external'), route('internal'), ref(AIGW, 'AIServiceBackend', 'gpt'), ref(AIGW, 'BackendSecurityPolicy', 'gpt-upstream-auth')];

let client: KubeRest;
let operator: OperatorProcess;

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name: 'blocked-operator', env: { NLS_CLEANUP_BLOCKED_SECONDS: String(BOUND_SECONDS) } });
});

afterAll(async () => {
  // What the AI Gateway controller does when it returns: drop its finalizer, so nothing lingers.
  for (const r of handledByAIGateway) {
    const obj = await client?.get(r).catch(() => undefined);
    if (obj?.metadata.finalizers?.includes(AI_GATEWAY_FINALIZER)) await client.mergePatch(r, { metadata: { finalizers: obj.metadata.finalizers.filter((f) => f !== AI_GATEWAY_FINALIZER) } }).catch(() => undefined);
  }
  if (operator?.child.exitCode === null) await operator.kill();
  client?.close();
});

it('reports CleanupBlocked naming the AI Gateway finalizer after the bound, never removes a foreign finalizer, and finishes once an admin removes it', async () => {
  await applyObject(passthroughModel(ns, 'gpt'));
  await waitFor('the model Ready', async () => isReadyAtGeneration(await client.get(model)), { timeoutMs: 90_000 });

  // The AI Gateway controller ran: its finalizer on the objects it handles, an HTTPRoute per route
  // (same name, controller owner reference to the route, as it generates them). Then it stopped.
  for (const r of handledByAIGateway) await client.jsonPatch(r, [{ op: 'add', path: '/metadata/finalizers', value: [AI_GATEWAY_FINALIZER] }], { fieldManager: 'envoy-ai-gateway' });
  for (const endpoint of ['external', 'internal']) {
    const owner = (await client.get(route(endpoint)))!;
    await client.create({
      ...httpRoute(endpoint),
      metadata: { name: `gpt-${endpoint}`, namespace: ns, ownerReferences: [{ apiVersion: AIGW, kind: 'AIGatewayRoute', name: owner.metadata.name, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true }] },
      spec: { parentRefs: [{ name: 'nebari-gateway', namespace: 'envoy-gateway-system' }], rules: [{ backendRefs: [{ name: 'x', port: 80 }] }] },
    } as KubeObject);
  }
  // Something else deletes the external route first, in background mode: it stays, held by the finalizer.
  await client.delete(route('external'));
  expect((await client.get(route('external')))!.metadata.deletionTimestamp).toBeDefined();

  await client.delete(model);
  let blocked: { status: string; reason: string; message: string; lastTransitionTime?: string } | undefined;
  await waitFor('CleanupBlocked on the model', async () => {
    blocked = condition(await client.get(model), 'CleanupBlocked');
    return blocked !== undefined;
  }, { timeoutMs: 60_000 });
  console.log(`CleanupBlocked ${blocked!.reason}: ${blocked!.message}`);
  expect(blocked).toMatchObject({ status: 'True', reason: 'ForeignFinalizer' });
  expect(blocked!.message).toContain(`HTTPRoute ${ns}/gpt-external to go; it goes with its owner AIGatewayRoute ${ns}/gpt-external, which is being deleted but held by finalizer ${AI_GATEWAY_FINALIZER}`);
  expect(blocked!.message).toContain('Start the Envoy AI Gateway controller');
  // Not before the bound: both times are whole seconds, rounded down.
  const deleting = await client.get(model);
  expect(Date.parse(blocked!.lastTransitionTime!) - Date.parse(deleting!.metadata.deletionTimestamp!)).toBeGreaterThanOrEqual(BOUND_SECONDS * 1000);
  const { items: events } = await client.list('v1', 'Event', { namespace: ns, fieldSelector: 'involvedObject.name=gpt' });
  expect(events.filter((e) => e.type === 'Warning' && e.reason === 'ForeignFinalizer')).toHaveLength(1);

  // The operator keeps waiting (another pass after the report) and removes nothing it does not own.
  const reportedAt = operator.lines.findIndex((l) => l.includes('"msg":"deletion blocked"'));
  expect(reportedAt).toBeGreaterThanOrEqual(0);
  await waitFor('another pass of the finalizer after the report', async () => operator.lines.slice(reportedAt + 1).some((l) => l.includes('waiting for a generated object to go')), { timeoutMs: 30_000 });
  expect((await client.get(route('external')))!.metadata.finalizers).toEqual([AI_GATEWAY_FINALIZER]);
  expect(await client.get(httpRoute('external'))).toBeDefined();
  expect((await client.get(model))!.metadata.finalizers).toContain('llm.nebari.dev/cleanup');
  // The route's auth policy outlives its HTTPRoute.
  expect(await client.get(ref('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', 'gpt-external-auth'))).toBeDefined();

  // The way out, as an admin who accepts skipping the AI Gateway's cleanup: the command the message shows.
  const command = /kubectl patch (\S+) (\S+) -n (\S+) --type=json -p '([^']+)'/.exec(blocked!.message);
  expect(command?.slice(1, 4)).toEqual(['aigatewayroutes.aigateway.envoyproxy.io', 'gpt-external', ns]);
  await client.jsonPatch(route('external'), JSON.parse(command![4]) as unknown[], { fieldManager: 'admin' });
  await waitFor('the model to be gone', async () => (await client.get(model)) === undefined, { timeoutMs: 90_000 });
  expect(await client.get(route('external'))).toBeUndefined();
  expect(await client.get(httpRoute('external'))).toBeUndefined();

  // Objects the operator deleted while they carried the AI Gateway finalizer: still there, finalizer untouched.
  for (const r of handledByAIGateway.slice(1)) {
    const obj = await client.get<KubeObject>(r);
    expect({ kind: r.kind, deleting: Boolean(obj?.metadata.deletionTimestamp), held: obj?.metadata.finalizers?.includes(AI_GATEWAY_FINALIZER) }).toEqual({ kind: r.kind, deleting: true, held: true });
  }
});
