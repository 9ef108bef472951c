import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { inClusterConnection, kubeconfigConnection, loadConnection, StaticConnection } from '../../../src/kube/connection';

const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');
const kubeconfig = (cluster: Record<string, unknown>, user: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
  users: [{ name: 'u', user }],
  contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }, { name: 'other', context: { cluster: 'missing', user: 'u' } }],
  'current-context': 'ctx',
});

async function optionsOf(connection: { applyToHTTPSOptions(o: https.RequestOptions): Promise<void> }): Promise<https.RequestOptions> {
  const options: https.RequestOptions = { headers: { accept: 'application/json' } };
  await connection.applyToHTTPSOptions(options);
  return options;
}

describe('kubeconfigConnection', () => {
  it('reads server, CA data and token of the current context', async () => {
    const c = kubeconfigConnection(JSON.stringify(kubeconfig({ 'certificate-authority-data': ca.toString('base64') }, { token: 'abc' })), '/nowhere/config');
    expect(c?.getCurrentCluster()).toEqual({ server: 'https://127.0.0.1:6443' });
    const options = await optionsOf(c!);
    expect(options.ca).toEqual(ca);
    expect(options.headers).toEqual({ accept: 'application/json', Authorization: 'Bearer abc' });
    expect(options.rejectUnauthorized).toBeUndefined();
  });

  it('reads YAML and files relative to the kubeconfig (client certificate, CA, token file)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-conn-'));
    try {
      fs.writeFileSync(path.join(dir, 'ca.crt'), ca);
      fs.writeFileSync(path.join(dir, 'client.crt'), 'CERT');
      fs.writeFileSync(path.join(dir, 'client.key'), 'KEY');
      fs.writeFileSync(path.join(dir, 'token'), 'from-file\n');
      const yaml = [
        'apiVersion: v1',
        'kind: Config',
        'current-context: ctx',
        'clusters:',
        '- name: c',
        '  cluster: {server: "https://k8s.example:443", certificate-authority: ca.crt, tls-server-name: api.example}',
        'users:',
        '- name: u',
        '  user: {client-certificate: client.crt, client-key: client.key, tokenFile: token}',
        'contexts:',
        '- name: ctx',
        '  context: {cluster: c, user: u}',
      ].join('\n');
      const options = await optionsOf(kubeconfigConnection(yaml, path.join(dir, 'config'))!);
      expect({ ca: options.ca?.toString(), cert: options.cert?.toString(), key: options.key?.toString(), servername: options.servername }).toEqual({ ca: ca.toString(), cert: 'CERT', key: 'KEY', servername: 'api.example' });
      expect(options.headers).toMatchObject({ Authorization: 'Bearer from-file' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('turns off verification only when the kubeconfig says insecure-skip-tls-verify', async () => {
    const options = await optionsOf(kubeconfigConnection(JSON.stringify(kubeconfig({ 'insecure-skip-tls-verify': true }, { token: 't' })), '/x')!);
    expect(options.rejectUnauthorized).toBe(false);
  });

  it.each([
    ['an exec plugin', kubeconfig({}, { exec: { command: 'aws' } })],
    ['an auth-provider', kubeconfig({}, { 'auth-provider': { name: 'oidc' } })],
    ['a proxy', kubeconfig({ 'proxy-url': 'http://proxy:3128' }, { token: 't' })],
    ['a context naming a missing cluster', { ...kubeconfig({}, { token: 't' }), 'current-context': 'other' }],
  ])('leaves a kubeconfig with %s to client-node', (_what, config) => {
    expect(kubeconfigConnection(JSON.stringify(config), '/x')).toBeUndefined();
  });
});

describe('inClusterConnection', () => {
  it('uses the ServiceAccount token and CA and re-reads a rotated token after a minute', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-sa-'));
    const now = jest.spyOn(Date, 'now');
    try {
      fs.writeFileSync(path.join(dir, 'token'), 'first');
      fs.writeFileSync(path.join(dir, 'ca.crt'), ca);
      now.mockReturnValue(1_000_000);
      const c = inClusterConnection({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir)!;
      expect(c.getCurrentCluster()).toEqual({ server: 'https://10.96.0.1:443' });
      expect((await optionsOf(c)).headers).toMatchObject({ Authorization: 'Bearer first' });
      fs.writeFileSync(path.join(dir, 'token'), 'second');
      now.mockReturnValue(1_030_000);
      expect((await optionsOf(c)).headers).toMatchObject({ Authorization: 'Bearer first' });
      now.mockReturnValue(1_061_000);
      expect((await optionsOf(c)).headers).toMatchObject({ Authorization: 'Bearer second' });
    } finally {
      now.mockRestore();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('brackets an IPv6 service host and is absent outside a cluster', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-sa-'));
    try {
      fs.writeFileSync(path.join(dir, 'token'), 't');
      fs.writeFileSync(path.join(dir, 'ca.crt'), ca);
      expect(inClusterConnection({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir)?.getCurrentCluster()).toEqual({ server: 'https://[fd00::1]:443' });
      expect(inClusterConnection({}, dir)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loadConnection', () => {
  it('reads the one file KUBECONFIG names itself, and hands several files to client-node', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-kc-'));
    const saved = process.env.KUBECONFIG;
    try {
      const file = path.join(dir, 'config');
      fs.writeFileSync(file, JSON.stringify(kubeconfig({ 'certificate-authority-data': ca.toString('base64') }, { token: 'abc' })));
      process.env.KUBECONFIG = file;
      expect(loadConnection()).toBeInstanceOf(StaticConnection);
      fs.writeFileSync(path.join(dir, 'second'), JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [], users: [], contexts: [] }));
      process.env.KUBECONFIG = [file, path.join(dir, 'second')].join(path.delimiter);
      const merged = loadConnection();
      expect(merged).not.toBeInstanceOf(StaticConnection);
      expect(merged.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
