// An operator without a base domain (the chart's default `platform.baseDomain: ""`) must not stop:
// its webhooks keep answering (they are fail-closed, so a crash would block every write) and
// each model gets Ready=False with reason OperatorNotConfigured naming the chart value. An issuer
// without token audiences (issue 29, Medium 9) stops the internal endpoint of each model that
// enables it, naming platform.jwt.audiences, and nothing else.
import * as https from 'node:https';
import { applyObject, createNamespace, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { OperatorProcess, condition, installGatewayCRDs, installOwnCRDs, passthroughModel, providerCredential, startOperator } from './operator-support';

const ns = uniqueName('op-unconf');
let operator: OperatorProcess | undefined;

/** POSTs an AdmissionReview to the webhook server (its certificate names the Service, so not verified here). */
function review(port: number, path: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  await installOwnCRDs();
  await installGatewayCRDs();
  await createNamespace(ns);
  await applyObject(providerCredential(ns));
});

afterAll(async () => {
  if (operator && operator.child.exitCode === null) await operator.kill();
});

it('keeps serving webhooks and reports OperatorNotConfigured on models', async () => {
  operator = startOperator({
    kubeconfigPath: kubeconfigPath(),
    namespace: ns,
    name: 'unconfigured-0',
    releaseName: 'nls-unconf',
    env: { NLS_BASE_DOMAIN: '', NLS_WEBHOOKS: 'true', NLS_WEBHOOK_PORT: '0' },
  });
  const listening = await operator.waitForLine(/webhook server listening/, 60_000);
  const port = Number(/"port":(\d+)/.exec(listening)![1]);
  await waitFor('the operator to be ready', async () => (await fetch(`http://127.0.0.1:${operator!.healthPort}/readyz`)).status === 200);

  const model = passthroughModel(ns, 'unconfigured');
  const answer = await review(port, '/validate-passthroughmodel', {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u-1',
      kind: { group: 'llm.nebari.dev', version: 'v1alpha1', kind: 'PassthroughModel' },
      resource: { group: 'llm.nebari.dev', version: 'v1alpha1', resource: 'passthroughmodels' },
      name: 'unconfigured',
      namespace: 'elsewhere',
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: { ...model, metadata: { ...model.metadata, namespace: 'elsewhere' } },
    },
  });
  expect(answer.status).toBe(200);
  expect(answer.body.response).toMatchObject({ uid: 'u-1', allowed: false });
  expect(answer.body.response.status.message).toContain('is not the operator namespace');

  await applyObject(model);
  const ref = { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', metadata: { name: 'unconfigured', namespace: ns } };
  await waitFor('the OperatorNotConfigured condition', async () => condition(await getObject(ref), 'Ready')?.reason === 'OperatorNotConfigured');
  const ready = condition(await getObject(ref), 'Ready')!;
  expect(ready.status).toBe('False');
  expect(ready.message).toContain('platform.baseDomain');
  expect(operator.child.exitCode).toBeNull();
}, 120_000);

it('refuses to publish an internal endpoint that would accept tokens of any audience, naming platform.jwt.audiences', async () => {
  const anyAudience = uniqueName('op-aud');
  await createNamespace(anyAudience);
  await applyObject(providerCredential(anyAudience));
  // The issuer (NLS_OIDC_ISSUER_URL of startOperator) without audiences: what the chart now refuses, set by hand.
  const process = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: anyAudience, name: 'any-audience-0', releaseName: 'nls-aud', env: { NLS_GATEWAY_CONTEXT: '{}' } });
  try {
    await applyObject(passthroughModel(anyAudience, 'internal'));
    await applyObject(passthroughModel(anyAudience, 'external-only', { internal: false }));
    const ref = (name: string) => ({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', metadata: { name, namespace: anyAudience } });
    await waitFor('the internal endpoint refused', async () => condition(await getObject(ref('internal')), 'InternalEndpointReady')?.reason === 'BuildFailed');
    const internal = condition(await getObject(ref('internal')), 'InternalEndpointReady')!;
    expect(internal.status).toBe('False');
    expect(internal.message).toContain('platform.jwt.audiences: is empty, so the internal endpoint would accept a token the issuer minted for any of its clients');
    expect(internal.message).toContain('platform.jwt.allowAnyAudience=true');
    expect((await getObject(ref('internal')))?.status).toMatchObject({ phase: 'Error' });
    // A model on the external endpoint only takes no OIDC tokens: the setting does not concern it.
    await waitFor('the external-only model reconciled', async () => condition(await getObject(ref('external-only')), 'InternalEndpointReady')?.reason === 'EndpointDisabled');
    expect(JSON.stringify((await getObject(ref('external-only')))?.status)).not.toContain('platform.jwt.audiences');
  } finally {
    await process.kill();
  }
}, 120_000);
