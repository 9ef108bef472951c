// AdmissionReview v1: the wire format the API server sends to a webhook and expects back.
// Parsing is strict because the body is untrusted input: anything that is not a well-formed v1
// review is reported as a reason string so the server can answer 400 instead of guessing.

export const admissionReviewApiVersion = 'admission.k8s.io/v1';

/** The kind/resource triple the API server puts in `request.kind` and `request.resource`. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** The identity that made the request being admitted (`request.userInfo`). */
export interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The part of an AdmissionReview the rules look at; `object` is the object as it would be stored. */
export interface AdmissionRequest<T = KubernetesObject> {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  /**
   * The kind of the client's own request, when the API server converted it to `kind` first
   * (`matchPolicy: Equivalent`): a v1alpha1 write reaches our v1beta1 webhooks with this v1alpha1.
   */
  readonly requestKind?: GroupVersionKind;
  readonly operation: AdmissionOperation;
  readonly name?: string;
  readonly namespace?: string;
  readonly userInfo: UserInfo;
  readonly object?: T;
  readonly oldObject?: T;
  readonly dryRun: boolean;
}

/** The minimum every Kubernetes object carries. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** What the webhook answers (`response` of an AdmissionReview). */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string; reason?: string };
  warnings?: string[];
  patchType?: 'JSONPatch';
  patch?: string;
}

export interface AdmissionReviewResponse {
  apiVersion: typeof admissionReviewApiVersion;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

export type ParsedReview = { ok: true; request: AdmissionRequest } | { ok: false; reason: string };

const operations: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function parseGroupVersionKind(value: unknown, field: string): GroupVersionKind | string {
  if (!isRecord(value)) return `${field} must be an object with group, version and kind`;
  const { group, version, kind } = value;
  if (typeof group !== 'string' || typeof version !== 'string' || typeof kind !== 'string' || !version || !kind) {
    return `${field} must have string group, non-empty version and non-empty kind`;
  }
  return { group, version, kind };
}

function parseUserInfo(value: unknown): UserInfo | string {
  if (value === undefined) return {};
  if (!isRecord(value)) return 'request.userInfo must be an object';
  const { username, uid, groups, extra } = value;
  if (username !== undefined && typeof username !== 'string') return 'request.userInfo.username must be a string';
  if (uid !== undefined && typeof uid !== 'string') return 'request.userInfo.uid must be a string';
  if (groups !== undefined && !isStringArray(groups)) return 'request.userInfo.groups must be a list of strings';
  if (extra !== undefined) {
    if (!isRecord(extra) || !Object.values(extra).every(isStringArray)) {
      return 'request.userInfo.extra must map strings to lists of strings';
    }
  }
  return {
    username,
    uid,
    groups,
    extra: extra as Record<string, string[]> | undefined,
  };
}

/** Deeper than any real object; beyond it, recursive code (defaulting, patch diffs) could overflow. */
export const maxObjectDepth = 100;

// Iterative, so the check itself cannot overflow the stack on hostile input; parallel stacks
// of nodes and depths and no Object.values copies, as it runs on every admission request.
function exceedsDepth(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  const visit = (child: unknown, depth: number) => {
    if (typeof child !== 'object' || child === null) return;
    nodes.push(child);
    depths.push(depth);
  };
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown> | unknown[];
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    if (Array.isArray(node)) for (let i = 0; i < node.length; i++) visit(node[i], depth + 1);
    else for (const key in node) visit(node[key], depth + 1);
  }
  return false;
}

function parseObject(value: unknown, field: string): KubernetesObject | undefined | string {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) return `${field} must be an object or null`;
  if (value.metadata !== undefined && !isRecord(value.metadata)) return `${field}.metadata must be an object`;
  if (exceedsDepth(value, maxObjectDepth)) return `${field} is nested deeper than ${maxObjectDepth} levels`;
  return value as KubernetesObject;
}

/** Validates the shape of a decoded AdmissionReview body and extracts the request. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  if (!isRecord(body)) return { ok: false, reason: 'body must be a JSON object (an AdmissionReview)' };
  if (body.kind !== 'AdmissionReview') return { ok: false, reason: 'kind must be "AdmissionReview"' };
  if (body.apiVersion !== admissionReviewApiVersion) {
    return {
      ok: false,
      reason: `apiVersion ${JSON.stringify(body.apiVersion)} is not served; only ${admissionReviewApiVersion} (set admissionReviewVersions: [v1])`,
    };
  }
  const request = body.request;
  if (!isRecord(request)) return { ok: false, reason: 'request must be an object' };
  const { uid, operation, name, namespace, dryRun } = request;
  if (typeof uid !== 'string' || uid.length === 0 || uid.length > 256) {
    return { ok: false, reason: 'request.uid must be a non-empty string' };
  }
  const kind = parseGroupVersionKind(request.kind, 'request.kind');
  if (typeof kind === 'string') return { ok: false, reason: kind };
  const requestKind = request.requestKind === undefined ? undefined : parseGroupVersionKind(request.requestKind, 'request.requestKind');
  if (typeof requestKind === 'string') return { ok: false, reason: requestKind };
  if (typeof operation !== 'string' || !operations.includes(operation)) {
    return { ok: false, reason: `request.operation must be one of ${operations.join(', ')}` };
  }
  if (name !== undefined && typeof name !== 'string') return { ok: false, reason: 'request.name must be a string' };
  if (namespace !== undefined && typeof namespace !== 'string') {
    return { ok: false, reason: 'request.namespace must be a string' };
  }
  if (dryRun !== undefined && typeof dryRun !== 'boolean') return { ok: false, reason: 'request.dryRun must be a boolean' };
  const userInfo = parseUserInfo(request.userInfo);
  if (typeof userInfo === 'string') return { ok: false, reason: userInfo };
  const object = parseObject(request.object, 'request.object');
  if (typeof object === 'string') return { ok: false, reason: object };
  const oldObject = parseObject(request.oldObject, 'request.oldObject');
  if (typeof oldObject === 'string') return { ok: false, reason: oldObject };
  return {
    ok: true,
    request: {
      uid,
      kind,
      ...(requestKind ? { requestKind } : {}),
      operation: operation as AdmissionOperation,
      name: name || undefined,
      namespace: namespace || undefined,
      userInfo,
      object,
      oldObject,
      dryRun: dryRun === true,
    },
  };
}

function review(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: admissionReviewApiVersion, kind: 'AdmissionReview', response };
}

/** Allows the request, passing any warnings through to the client. */
export function allow(uid: string, warnings: readonly string[] = []): AdmissionReviewResponse {
  return review({ uid, allowed: true, ...(warnings.length ? { warnings: [...warnings] } : {}) });
}

/** Denies the request; the API server shows `message` to the client after the webhook's name. */
export function deny(
  uid: string,
  message: string,
  code = 422,
  warnings: readonly string[] = [],
): AdmissionReviewResponse {
  const reasons: Record<number, string> = { 403: 'Forbidden', 422: 'Invalid', 500: 'InternalError', 503: 'ServiceUnavailable' };
  const reason = reasons[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
  return review({
    uid,
    allowed: false,
    status: { code, message, reason },
    ...(warnings.length ? { warnings: [...warnings] } : {}),
  });
}

/** Allows the request with a JSON Patch applied to the object (omitted when there is nothing to change). */
export function allowWithPatch(uid: string, patch: readonly unknown[], warnings: readonly string[] = []): AdmissionReviewResponse {
  const allowed = allow(uid, warnings);
  if (patch.length === 0) return allowed;
  allowed.response.patchType = 'JSONPatch';
  allowed.response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
  return allowed;
}
