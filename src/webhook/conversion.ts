// The conversion webhook: a ConversionReview (apiextensions.k8s.io/v1) in, the same review with
// every object converted out. The conversion itself is the pure src/api/conversion; this file
// only reads and writes the review. A review the API server would never send (not a
// ConversionReview, no uid) is a 400; an object that is not ours or a version we do not serve
// fails the whole review with a message, as the API server expects.
import { convertTo } from '../api/conversion';

export const CONVERSION_REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';

export interface ConversionReviewResponse {
  apiVersion: typeof CONVERSION_REVIEW_API_VERSION;
  kind: 'ConversionReview';
  response: {
    uid: string;
    convertedObjects: unknown[];
    result: { status: 'Success' } | { status: 'Failure'; message: string };
  };
}

export type ParsedConversionReview = { ok: true; uid: string; desiredAPIVersion: string; objects: unknown[] } | { ok: false; reason: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request of a decoded ConversionReview, or why it is not one. */
export function parseConversionReview(body: unknown): ParsedConversionReview {
  if (!isRecord(body) || body.kind !== 'ConversionReview') return { ok: false, reason: 'the body is not a ConversionReview' };
  if (body.apiVersion !== CONVERSION_REVIEW_API_VERSION) {
    return { ok: false, reason: `ConversionReview ${JSON.stringify(body.apiVersion)} is not served; set conversionReviewVersions: ["v1"] in the CRD` };
  }
  const request = body.request;
  if (!isRecord(request)) return { ok: false, reason: 'the ConversionReview has no request' };
  if (typeof request.uid !== 'string' || request.uid === '') return { ok: false, reason: 'request.uid is missing' };
  if (typeof request.desiredAPIVersion !== 'string') return { ok: false, reason: 'request.desiredAPIVersion is missing' };
  if (!Array.isArray(request.objects)) return { ok: false, reason: 'request.objects is not a list' };
  return { ok: true, uid: request.uid, desiredAPIVersion: request.desiredAPIVersion, objects: request.objects };
}

/** The answer to one review: every object converted, or a Failure naming the first object that cannot be. */
export function answerConversionReview(review: { uid: string; desiredAPIVersion: string; objects: unknown[] }): ConversionReviewResponse {
  const convertedObjects: unknown[] = [];
  for (const [index, object] of review.objects.entries()) {
    const result = convertTo(object, review.desiredAPIVersion);
    if (!result.ok) {
      const name = isRecord(object) && isRecord(object.metadata) ? ` (${String(object.metadata.namespace ?? '')}/${String(object.metadata.name ?? '')})` : '';
      return {
        apiVersion: CONVERSION_REVIEW_API_VERSION,
        kind: 'ConversionReview',
        response: { uid: review.uid, convertedObjects: [], result: { status: 'Failure', message: `objects[${index}]${name}: ${result.reason}` } },
      };
    }
    convertedObjects.push(result.object);
  }
  return { apiVersion: CONVERSION_REVIEW_API_VERSION, kind: 'ConversionReview', response: { uid: review.uid, convertedObjects, result: { status: 'Success' } } };
}
