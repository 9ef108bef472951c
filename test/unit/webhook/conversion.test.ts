// The conversion webhook: the ConversionReview reading and answering (pure), and /convert on the
// real TLS listener over loopback.
import { issueCertificateAuthority, issueServingCertificate } from '../../../src/webhook/certificates';
import { answerConversionReview, parseConversionReview } from '../../../src/webhook/conversion';
import { type AdmissionServer, listenAdmissionServer } from '../../../src/webhook/server';
import { post } from '../../support/webhook/tls-client';

const llmModel = {
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'LLMModel',
  metadata: { name: 'm', namespace: 'ns', uid: 'u-1', resourceVersion: '7' },
  spec: {
    model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
    resources: { gpu: { count: 1, type: 'nvidia' } },
    access: { public: true },
    serving: { replicas: 1, vllmArgs: ['--max-model-len=8192'] },
  },
  status: { phase: 'Ready' },
};

const review = (objects: unknown[], desiredAPIVersion = 'llm.nebari.dev/v1beta1') => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: { uid: 'r-1', desiredAPIVersion, objects },
});

describe('parseConversionReview', () => {
  it.each([
    ['not a review', { kind: 'AdmissionReview' }, 'not a ConversionReview'],
    ['v1beta1 reviews', { ...review([]), apiVersion: 'apiextensions.k8s.io/v1beta1' }, 'conversionReviewVersions: ["v1"]'],
    ['no request', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }, 'has no request'],
    ['no uid', { ...review([]), request: { desiredAPIVersion: 'x', objects: [] } }, 'request.uid is missing'],
    ['objects not a list', { ...review([]), request: { uid: 'u', desiredAPIVersion: 'x', objects: {} } }, 'request.objects is not a list'],
  ])('refuses %s, saying why', (_name, body, reason) => {
    const parsed = parseConversionReview(body);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toContain(reason);
  });
});

describe('answerConversionReview', () => {
  it('converts every object, keeps metadata (uid, resourceVersion) and answers Success with the uid', () => {
    const parsed = parseConversionReview(review([llmModel, { ...llmModel, metadata: { ...llmModel.metadata, name: 'n' } }]));
    if (!parsed.ok) throw new Error(parsed.reason);
    const answer = answerConversionReview(parsed);
    expect(answer.response.uid).toBe('r-1');
    expect(answer.response.result).toEqual({ status: 'Success' });
    expect(answer.response.convertedObjects).toHaveLength(2);
    expect(answer.response.convertedObjects[0]).toEqual({
      ...llmModel,
      apiVersion: 'llm.nebari.dev/v1beta1',
      spec: { ...llmModel.spec, serving: { replicas: 1, engineArgs: ['--max-model-len=8192'] } },
    });
  });

  it('fails the whole review on an object that is not ours, naming it', () => {
    const answer = answerConversionReview({ uid: 'r-2', desiredAPIVersion: 'llm.nebari.dev/v1beta1', objects: [llmModel, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } }] });
    expect(answer.response).toEqual({
      uid: 'r-2',
      convertedObjects: [],
      result: { status: 'Failure', message: 'objects[1] (ns/p): apiVersion "v1" is not one of llm.nebari.dev/v1alpha1, llm.nebari.dev/v1beta1' },
    });
  });
});

describe('/convert on the webhook listener', () => {
  const ca = issueCertificateAuthority({ commonName: 'conversion-test-ca' });
  const serving = issueServingCertificate({ ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const timings: number[] = [];
  let server: AdmissionServer;
  beforeAll(async () => {
    server = await listenAdmissionServer({
      routes: new Map(),
      conversionPath: '/convert',
      onConversion: (ms) => timings.push(ms),
      certificate: { cert: serving.certPem, key: serving.keyPem },
      host: '127.0.0.1',
      port: 0,
    });
  });
  afterAll(() => server.close());
  const send = (body: string, path = '/convert') => post({ port: server.port, path, body, ca: ca.certPem });

  it('answers a ConversionReview and reports its duration', async () => {
    const response = await send(JSON.stringify(review([llmModel])));
    expect(response.status).toBe(200);
    const answer = JSON.parse(response.body);
    expect(answer).toMatchObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'r-1', result: { status: 'Success' } } });
    expect(answer.response.convertedObjects[0].apiVersion).toBe('llm.nebari.dev/v1beta1');
    expect(timings).toHaveLength(1);
  });

  it('answers 400 to a body that is not a ConversionReview and 404 elsewhere, listing /convert', async () => {
    const bad = await send(JSON.stringify({ kind: 'AdmissionReview' }));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).message).toContain('not a ConversionReview');
    const missing = await send(JSON.stringify(review([])), '/elsewhere');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).message).toContain('served paths: /convert');
  });
});
