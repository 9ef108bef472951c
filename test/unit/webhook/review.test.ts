import { allow, allowWithPatch, deny, parseAdmissionReview } from '../../../src/webhook/review';

const valid = {
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: 'llm.nebari.dev', version: 'v1alpha1', kind: 'LLMModel' },
    resource: { group: 'llm.nebari.dev', version: 'v1alpha1', resource: 'llmmodels' },
    operation: 'CREATE',
    name: 'qwen',
    namespace: 'ns',
    userInfo: { username: 'alice', groups: ['dev'], extra: { scopes: ['a'] } },
    object: { metadata: { name: 'qwen' }, spec: {} },
    oldObject: null,
    dryRun: true,
  },
};

describe('parseAdmissionReview', () => {
  it('extracts the request of a well-formed v1 review', () => {
    const parsed = parseAdmissionReview(valid);
    expect(parsed).toEqual({
      ok: true,
      request: {
        uid: valid.request.uid,
        kind: valid.request.kind,
        operation: 'CREATE',
        name: 'qwen',
        namespace: 'ns',
        userInfo: { username: 'alice', groups: ['dev'], extra: { scopes: ['a'] }, uid: undefined },
        object: valid.request.object,
        oldObject: undefined,
        dryRun: true,
      },
    });
  });

  const withRequest = (patch: Record<string, unknown>) => ({ ...valid, request: { ...valid.request, ...patch } });
  it.each([
    ['not an object', [], 'body must be a JSON object'],
    ['null', null, 'body must be a JSON object'],
    ['wrong kind', { ...valid, kind: 'Pod' }, 'kind must be "AdmissionReview"'],
    ['v1beta1', { ...valid, apiVersion: 'admission.k8s.io/v1beta1' }, 'only admission.k8s.io/v1'],
    ['no request', { ...valid, request: undefined }, 'request must be an object'],
    ['empty uid', withRequest({ uid: '' }), 'request.uid'],
    ['numeric uid', withRequest({ uid: 7 }), 'request.uid'],
    ['kind without version', withRequest({ kind: { group: '', kind: 'X' } }), 'request.kind'],
    ['unknown operation', withRequest({ operation: 'PATCH' }), 'request.operation'],
    ['userInfo groups not strings', withRequest({ userInfo: { groups: [1] } }), 'request.userInfo.groups'],
    ['userInfo extra not lists', withRequest({ userInfo: { extra: { a: 'b' } } }), 'request.userInfo.extra'],
    ['object is an array', withRequest({ object: [] }), 'request.object must be an object'],
    ['metadata is a string', withRequest({ object: { metadata: 'x' } }), 'request.object.metadata'],
    ['dryRun is a string', withRequest({ dryRun: 'yes' }), 'request.dryRun'],
    ['namespace is a number', withRequest({ namespace: 1 }), 'request.namespace'],
    ['an object nested too deep', withRequest({ object: JSON.parse(`${'{"a":'.repeat(150)}1${'}'.repeat(150)}`) }), 'request.object is nested deeper than 100 levels'],
    ['an object nested too deep in lists', withRequest({ object: { spec: JSON.parse(`${'[{"a":'.repeat(60)}1${'}]'.repeat(60)}`) } }), 'request.object is nested deeper than 100 levels'],
    ['an old object nested too deep', withRequest({ oldObject: JSON.parse(`${'{"a":'.repeat(101)}1${'}'.repeat(101)}`) }), 'request.oldObject is nested deeper than 100 levels'],
  ])('rejects %s', (_case, body, reason) => {
    const parsed = parseAdmissionReview(body);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toContain(reason);
  });
});

describe('nesting limit', () => {
  const withRequest = (patch: Record<string, unknown>) => ({ ...valid, request: { ...valid.request, ...patch } });
  // An object `levels` deep (the object itself is level 1), alternating maps and lists.
  const nested = (levels: number): unknown => {
    let value: unknown = {};
    for (let level = levels - 1; level >= 1; level--) value = level % 2 ? { spec: value } : [value];
    return value;
  };

  it('accepts an object exactly 100 levels deep and refuses 101, through maps and lists alike', () => {
    expect(parseAdmissionReview(withRequest({ object: nested(100) })).ok).toBe(true);
    expect(parseAdmissionReview(withRequest({ object: nested(101) }))).toEqual({ ok: false, reason: 'request.object is nested deeper than 100 levels' });
  });
});

describe('responses', () => {
  it('allow carries the uid and warnings only when there are some', () => {
    expect(allow('u')).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true } });
    expect(allow('u', ['w']).response.warnings).toEqual(['w']);
  });

  it('deny carries code, reason and message', () => {
    expect(deny('u', 'no', 403).response).toEqual({ uid: 'u', allowed: false, status: { code: 403, message: 'no', reason: 'Forbidden' } });
    expect(deny('u', 'bad').response.status).toEqual({ code: 422, message: 'bad', reason: 'Invalid' });
  });

  it('allowWithPatch encodes the patch in base64 and omits an empty one', () => {
    const patch = [{ op: 'add', path: '/spec/x', value: 1 }];
    const response = allowWithPatch('u', patch).response;
    expect(response.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(response.patch as string, 'base64').toString())).toEqual(patch);
    expect(allowWithPatch('u', []).response).toEqual({ uid: 'u', allowed: true });
  });
});
