// The operator's apply skip against a watch that lags its writes, on a real API server: a model's
// external SecurityPolicy as the translation renders it goes from its own key Secret to its own
// and a peer's and back, while the cache still shows the first body. The policy stored at the end
// must be the last one applied, recorded with the generation the server gave it (so that a
// restarted operator can skip it), and an unchanged body is not sent again once the watch caught up.
import { applyObject, createNamespace, kubeConfig, uniqueName } from '../support/cluster';
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { applyObject as operatorApply, lookupMetadata, seenByWatch } from '../../src/operator/runtime/apply';
import { registerCachedKind } from '../../src/operator/runtime/cached-lookups';
import { desiredGatewayObjects } from '../../src/translate/gateway';
import { ANNOTATION_APPLIED_GENERATION } from '../../src/translate/applied-digest';
import type { PassthroughModelV1beta1 } from '../../src/api/v1beta1';
import { installGatewayCRDs, installOwnCRDs, passthroughModel, providerCredential } from './operator-support';

const ns = uniqueName('apply-lag');
const POLICY = { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy' };
let client: KubeRest;

beforeAll(async () => {
  await installOwnCRDs();
  await installGatewayCRDs();
  await createNamespace(ns);
  await applyObject(providerCredential(ns));
  client = new KubeRest(kubeConfig());
}, 120_000);

afterAll(() => client?.close());

it('applies a body that went back to the one its lagging cache shows, and records the generation the server gave it', async () => {
  // The model as stored (v1beta1, with its uid), so the policy's owner exists and nothing collects it.
  await applyObject(passthroughModel(ns, 'gpt'));
  const model = (await client.get<KubeObject>(objectRef('llm.nebari.dev/v1beta1', 'PassthroughModel', 'gpt', ns)))!;
  const externalPolicy = (keySecrets: string[]) => {
    const translation = desiredGatewayObjects(model as unknown as PassthroughModelV1beta1, {
      baseDomain: 'example.com',
      jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] },
      apiKeysSecretName: 'gpt-api-keys',
      externalEndpointKeySecrets: keySecrets,
    });
    expect(translation.errors).toEqual([]);
    const policies = (translation.objects as unknown as KubeObject[]).filter((o) => o.kind === POLICY.kind && JSON.stringify(o.spec).includes('apiKeyAuth'));
    expect(policies).toHaveLength(1);
    return policies[0];
  };
  const name = externalPolicy([]).metadata.name!;
  const stored = () => client.get<KubeObject & { spec: { apiKeyAuth: { credentialRefs: { name: string }[] } } }>(objectRef(POLICY.apiVersion, POLICY.kind, name, ns));

  // A watch that reports the server's object only when told, kept as the generated-object watches keep it.
  const cache = new Map<string, KubeObject>();
  registerCachedKind(client, POLICY.apiVersion, POLICY.kind, ns, { hasSynced: true, get: (_ns, n) => cache.get(n) });
  const deliver = async () => {
    const { apiVersion: _v, kind: _k, ...item } = lookupMetadata((await stored())!);
    cache.set(name, item as KubeObject);
    seenByWatch(client, POLICY, item as KubeObject);
  };

  await operatorApply(client, externalPolicy([]));
  await deliver();
  await operatorApply(client, externalPolicy(['llama-api-keys'])); // a peer joined; the watch has not reported it
  await operatorApply(client, externalPolicy([])); // and left: the cache still shows this body
  const after = (await stored())!;
  expect(after.spec.apiKeyAuth.credentialRefs.map((r) => r.name)).toEqual(['gpt-api-keys']);
  expect(after.metadata.generation).toBe(3);
  expect(after.metadata.annotations?.[ANNOTATION_APPLIED_GENERATION]).toBe('3');

  // Once the watch caught up, the same body is not sent again.
  await deliver();
  await operatorApply(client, externalPolicy([]));
  expect((await stored())!.metadata.resourceVersion).toBe(after.metadata.resourceVersion);
});
