// The listener against real TLS connections on loopback (no cluster involved).
import * as https from 'node:https';
import * as tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import * as forge from 'node-forge';
import { issueCertificateAuthority, issueServingCertificate } from '../../../src/webhook/certificates';
import { allow, deny } from '../../../src/webhook/review';
import { type AdmissionServer, type AdmissionHandler, listenAdmissionServer } from '../../../src/webhook/server';
import { admissionReview, isWellFormedAnswer, post } from '../../support/webhook/tls-client';

const ca = issueCertificateAuthority({ commonName: 'server-test-ca' });
const first = issueServingCertificate({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
const second = issueServingCertificate({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });

const routes = new Map<string, AdmissionHandler>([
  ['/allow', async (request) => allow(request.uid, ['careful'])],
  ['/deny', async (request) => deny(request.uid, 'spec.x: not allowed')],
  ['/throw', async () => { throw new Error('rule bug'); }],
  ['/hang', () => new Promise(() => undefined)],
]);

let server: AdmissionServer;
/** What onAdmission was told, in order (the operator's nls_webhook_admission_* metrics). */
const observed: { kind: string; operation: string; outcome: string; seconds: number }[] = [];
beforeAll(async () => {
  server = await listenAdmissionServer({
    routes,
    onAdmission: (kind, operation, outcome, seconds) => observed.push({ kind, operation, outcome, seconds }),
    certificate: { cert: first.certPem, key: first.keyPem },
    host: '127.0.0.1',
    port: 0,
    maxBodyBytes: 64 * 1024,
    handlerTimeoutMs: 300,
    requestTimeoutMs: 1000,
    headersTimeoutMs: 800,
  });
});
afterAll(() => server.close());

const review = admissionReview({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'LLMModel', metadata: { name: 'm' }, spec: {} });
const uid = (review.request as { uid: string }).uid;
const send = (path: string, body: string | Buffer, extra: { method?: string; headers?: Record<string, string> } = {}) =>
  post({ port: server.port, path, body, ca: ca.certPem, ...extra });

describe('admission server', () => {
  it('answers a well-formed review with the handler\'s response', async () => {
    const response = await send('/allow', JSON.stringify(review));
    expect(response.status).toBe(200);
    expect(isWellFormedAnswer(response, uid)).toBe(true);
    expect(JSON.parse(response.body).response).toEqual({ uid, allowed: true, warnings: ['careful'] });
  });

  it.each([
    ['an unknown path', '/nope', JSON.stringify(review), {}, 404, 'no webhook at /nope'],
    ['GET', '/allow', '', { method: 'GET' }, 405, 'GET is not allowed'],
    ['a wrong content type', '/allow', JSON.stringify(review), { headers: { 'Content-Type': 'text/plain' } }, 415, 'send application/json'],
    ['invalid JSON', '/allow', '{"apiVersion":', {}, 400, 'body is not valid JSON'],
    ['a v1beta1 review', '/allow', JSON.stringify({ ...review, apiVersion: 'admission.k8s.io/v1beta1' }), {}, 400, 'only admission.k8s.io/v1'],
    ['an oversized body', '/allow', Buffer.alloc(128 * 1024, 'a'), {}, 413, 'exceeds the 65536-byte limit'],
  ])('answers %s with a JSON Status', async (_case, path, body, extra, status, message) => {
    const response = await send(path, body, extra);
    expect(response.status).toBe(status);
    expect(isWellFormedAnswer(response)).toBe(true);
    expect(JSON.parse(response.body).message).toContain(message);
  });

  it('answers an oversized chunked body (no Content-Length) with 413', async () => {
    const response = await new Promise<{ status: number }>((resolve, reject) => {
      const request = https.request(
        { host: '127.0.0.1', port: server.port, path: '/allow', method: 'POST', ca: ca.certPem, headers: { 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        },
      );
      request.on('error', reject);
      for (let i = 0; i < 20; i++) request.write(Buffer.alloc(8 * 1024, 'b'));
      request.end();
    });
    expect(response.status).toBe(413);
  });

  it('turns a failing handler into a denial and a stuck one into a timely denial', async () => {
    const failed = JSON.parse((await send('/throw', JSON.stringify(review))).body);
    expect(failed.response).toMatchObject({ uid, allowed: false, status: { code: 500 } });
    const started = Date.now();
    const stuck = JSON.parse((await send('/hang', JSON.stringify(review))).body);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(stuck.response.status.message).toContain('timed out after 300 ms');
  });

  it('tells onAdmission the kind, operation and outcome of each answered review: allowed, denied, or error for a failing or stuck handler', async () => {
    observed.length = 0;
    for (const path of ['/allow', '/deny', '/throw', '/hang']) await send(path, JSON.stringify(review));
    await send('/nope', JSON.stringify(review)); // not a review answered by a handler: not observed
    expect(observed.map(({ kind, operation, outcome }) => ({ kind, operation, outcome }))).toEqual([
      { kind: 'LLMModel', operation: 'CREATE', outcome: 'allowed' },
      { kind: 'LLMModel', operation: 'CREATE', outcome: 'denied' },
      { kind: 'LLMModel', operation: 'CREATE', outcome: 'error' },
      { kind: 'LLMModel', operation: 'CREATE', outcome: 'error' },
    ]);
    expect(observed.every((o) => o.seconds >= 0)).toBe(true);
  });

  // Writes raw bytes over TLS and returns whatever the server answers before closing.
  const raw = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: ca.certPem }, () => socket.write(bytes));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
  const statusOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { kind: string; code: number; message: string };

  it('survives garbage that is not HTTP, answering with a JSON Status', async () => {
    const answer = await raw('\x00\x01garbage\r\n\r\n');
    expect(answer).toContain('400 Bad Request');
    expect(statusOf(answer)).toMatchObject({ kind: 'Status', code: 400 });
    expect((await send('/allow', JSON.stringify(review))).status).toBe(200);
  });

  it('answers a stalled body with 408 instead of waiting for it', async () => {
    const started = Date.now();
    const answer = await raw('POST /allow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"apiVersion"');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(statusOf(answer)).toMatchObject({ kind: 'Status', code: 408, message: 'the request was not received in time' });
  });

  it('serves a new certificate to new connections after setCertificate', async () => {
    const peerFingerprint = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: ca.certPem }, () => {
          resolve(socket.getPeerX509Certificate()!.fingerprint256);
          socket.end();
        });
        socket.on('error', reject);
      });
    expect(await peerFingerprint()).toBe(new X509Certificate(first.certPem).fingerprint256);
    server.setCertificate({ cert: second.certPem, key: second.keyPem });
    expect(await peerFingerprint()).toBe(new X509Certificate(second.certPem).fingerprint256);
    expect(server.servedCertificate()).toBe(second.certPem);
  });
});

/** A TLS client certificate (extKeyUsage clientAuth) signed by `issuer`, as the API server's webhook kubeconfig holds. */
function clientCertificate(issuer: { certPem: string; keyPem: string }, commonName: string): { certPem: string; keyPem: string } {
  const keys = forge.pki.rsa.generateKeyPair(2048);
  const caCert = forge.pki.certificateFromPem(issuer.certPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 3_600_000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([{ name: 'basicConstraints', cA: false }, { name: 'keyUsage', digitalSignature: true, keyEncipherment: true }, { name: 'extKeyUsage', clientAuth: true }]);
  cert.sign(forge.pki.privateKeyFromPem(issuer.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

describe('admission server restricted to the API server\'s client certificate (issue 29, Low)', () => {
  const apiServerCa = issueCertificateAuthority({ commonName: 'api-server-webhook-client-ca' });
  const apiServer = clientCertificate(apiServerCa, 'kube-apiserver');
  const otherCa = issueCertificateAuthority({ commonName: 'some-pod-ca' });
  const otherPod = clientCertificate(otherCa, 'some-pod');
  let restricted: AdmissionServer;
  beforeAll(async () => {
    restricted = await listenAdmissionServer({ routes, certificate: { cert: first.certPem, key: first.keyPem }, clientCa: apiServerCa.certPem, host: '127.0.0.1', port: 0 });
  });
  afterAll(() => restricted.close());

  const call = (client?: { certPem: string; keyPem: string }) =>
    new Promise<number>((resolve, reject) => {
      const request = https.request(
        { host: '127.0.0.1', port: restricted.port, path: '/allow', method: 'POST', ca: ca.certPem, headers: { 'Content-Type': 'application/json' }, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify(review));
    });

  it('answers the API server, presenting a certificate of the configured CA', async () => {
    expect(await call(apiServer)).toBe(200);
  });

  it('refuses, at the TLS handshake, a pod without a certificate or with one of another CA', async () => {
    await expect(call()).rejects.toThrow();
    await expect(call(otherPod)).rejects.toThrow();
  });

  it('keeps requiring it after the serving certificate is replaced', async () => {
    restricted.setCertificate({ cert: second.certPem, key: second.keyPem });
    await expect(call()).rejects.toThrow();
    expect(await call(apiServer)).toBe(200);
  });
});
