import Ajv from 'ajv';
import { kindDefinition, PASSTHROUGHMODEL_DEFINITION, rootSchema } from '../../../src/api';
import { NO_API_SERVER_ATTEMPTS, probeObject, probeOutcome, waitWebhooks } from '../../../src/cli/lifecycle/wait-webhooks';
import type { KubeRest } from '../../../src/kube/rest';
import { apiError } from '../../../src/kube/rest';

const answer = (status: number, reason: string, message: string) =>
  apiError('POST', '/apis/llm.nebari.dev/v1alpha1/namespaces/ns/passthroughmodels', status, JSON.stringify({ kind: 'Status', reason, message }));

describe('wait-webhooks probe', () => {
  test('an admitted dry run or a denial by our webhook means the API server reaches it', () => {
    expect(probeOutcome()).toBe('reached');
    expect(probeOutcome(answer(400, 'BadRequest', 'admission webhook "vpassthroughmodel.llm.nebari.dev" denied the request: spec.provider.credentialSecretName: Secret "x" not found'))).toBe('reached');
  });

  test('a webhook the API server cannot call yet is waited for', () => {
    expect(probeOutcome(answer(500, 'InternalError', 'Internal error occurred: failed calling webhook "mpassthroughmodel.llm.nebari.dev": failed to call webhook: Post "https://x.ns.svc:443/mutate-passthroughmodel?timeout=10s": dial tcp 10.96.0.9:443: connect: connection refused'))).toBe('unreachable');
    expect(probeOutcome(answer(404, 'NotFound', 'the server could not find the requested resource'))).toBe('unreachable');
  });

  test('missing RBAC stops at once: waiting would not help', () => {
    expect(probeOutcome(answer(403, 'Forbidden', 'passthroughmodels.llm.nebari.dev is forbidden: User "system:serviceaccount:ns:x" cannot create resource "passthroughmodels" in API group "llm.nebari.dev" in the namespace "ns"'))).toBe('forbidden');
  });

  test('a probe the schema refuses stops at once, naming the cause', () => {
    expect(probeOutcome(answer(422, 'Invalid', 'PassthroughModel.llm.nebari.dev "nls-webhook-probe" is invalid: spec.access: Required value'))).toBe('invalid');
  });

  test('the probe is a PassthroughModel the CRD schema accepts, in the given namespace', () => {
    const probe = probeObject('ns');
    expect(probe).toMatchObject({ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', metadata: { namespace: 'ns' } });
    const validate = new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(rootSchema(kindDefinition(PASSTHROUGHMODEL_DEFINITION.kind)!.v1beta1Schema!));
    expect(validate(probe) ? [] : validate.errors).toEqual([]);
    // The CEL rule on access (ajv does not run CEL): someone may call the model.
    expect(probe.spec.access.groups?.length).toBeGreaterThan(0);
    // No Secret reference: the webhooks' Secret review would deny the install check's ServiceAccount.
    expect(JSON.stringify(probe)).not.toMatch(/secret/i);
  });

  test('no API server (connection refused, unknown host) or a server that is not one stops soon, naming the kubeconfig', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    expect(probeOutcome(refused)).toBe('no-api-server');
    expect(probeOutcome(Object.assign(new Error('getaddrinfo ENOTFOUND k8s.example.com'), { code: 'ENOTFOUND' }))).toBe('no-api-server');
    expect(probeOutcome(apiError('POST', '/apis/llm.nebari.dev/v1beta1/namespaces/ns/passthroughmodels', 404, '<html><body>Not Found</body></html>'))).toBe('not-kubernetes');

    // The whole command: a fixed number of probes, not the whole --timeout.
    let calls = 0;
    const rest = { create: async () => { calls++; throw refused; } } as unknown as KubeRest;
    const out: string[] = [];
    expect(await waitWebhooks(rest, { namespace: 'ns', timeoutMs: 3_600_000, intervalMs: 0 }, (l) => out.push(l))).toBe(1);
    expect(calls).toBe(NO_API_SERVER_ATTEMPTS);
    expect(out.at(-1)).toBe('error: cannot connect to the API server (connect ECONNREFUSED 127.0.0.1:6443); check --kubeconfig and --context: the webhooks can only be probed through it');
    const html = { create: async () => { throw apiError('POST', '/x', 404, '<html>Not Found</html>'); } } as unknown as KubeRest;
    const lines: string[] = [];
    expect(await waitWebhooks(html, { namespace: 'ns', timeoutMs: 3_600_000, intervalMs: 0 }, (l) => lines.push(l))).toBe(1);
    expect(lines).toEqual([expect.stringMatching(/^error: the server in the kubeconfig answered 404 without a Kubernetes Status, so it is not a Kubernetes API server; check --kubeconfig and --context/)]);
  });
});
