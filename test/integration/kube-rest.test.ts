// The project's REST client against the real API server, where its behaviour is not plain
// JSON-over-HTTP: a namespaced object without a namespace is an error naming the field (client-go
// would silently use `default`; a controller that lost a namespace must not write there), while a
// list without a namespace means all namespaces and cluster-scoped objects need none.
import { objectRef } from '../../src/kube/rest';
import { rest, uniqueName } from '../support/cluster';

const client = rest();
afterAll(() => client.close());

test('a namespaced object without a namespace is refused before any request, naming the field', async () => {
  const name = uniqueName('no-ns');
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } };
  const message = /ConfigMap "no-ns-[a-z0-9]+" has no metadata\.namespace; ConfigMap is namespaced, so set the namespace it belongs in/;
  await expect(client.create(configMap)).rejects.toThrow(message);
  await expect(client.apply(configMap, { fieldManager: 'kube-rest-test' })).rejects.toThrow(message);
  await expect(client.get(objectRef('v1', 'ConfigMap', name))).rejects.toThrow(message);
  await expect(client.delete(objectRef('v1', 'ConfigMap', name))).rejects.toThrow(message);
  // Nothing landed in `default`.
  expect(await client.get(objectRef('v1', 'ConfigMap', name, 'default'))).toBeUndefined();
});

test('a list without a namespace spans all namespaces; cluster-scoped objects need none', async () => {
  const namespaces = (await client.list('v1', 'Namespace')).items.map((n) => n.metadata.name);
  expect(namespaces).toEqual(expect.arrayContaining(['default', 'kube-system']));
  const serviceAccounts = await client.list('v1', 'ServiceAccount');
  expect(new Set(serviceAccounts.items.map((s) => s.metadata.namespace)).size).toBeGreaterThan(1);
  expect(await client.get(objectRef('v1', 'Namespace', 'kube-system'))).toMatchObject({ metadata: { name: 'kube-system' } });
});

test('sequential requests reuse one kept-alive TLS connection', async () => {
  const sockets = new Set<unknown>();
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve, reject) => {
      void client
        .open('GET', '/api/v1/namespaces/default', {}, (res) => {
          sockets.add(res.socket);
          res.resume();
          res.on('end', resolve);
        })
        .then((req) => req.on('error', reject), reject);
    });
  }
  // One connection for all five (the kubeconfig's per-request agent would open five).
  expect(sockets.size).toBe(1);
});
