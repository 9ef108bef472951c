// A digest of each generated object's body, carried on the object itself, so that an operator
// process that has just started can tell, from the metadata its informers cache (or one read),
// that an object is already what it would apply, and send nothing (src/operator/runtime/apply.ts).
// The gateway translation adds it, so `npm run synth` renders the same annotation the operator
// applies; the operator adds it to the provider objects of LLMModels, which only it renders.
import { createHash } from 'node:crypto';

/** The digest of the object's body without this annotation (base64url SHA-256 of its JSON). */
export const ANNOTATION_APPLIED_DIGEST = 'llm.nebari.dev/applied-digest';
/**
 * The `metadata.generation` the operator's apply of that body produced, set by the operator only
 * (a render cannot know it): a spec edit by anyone else raises the generation, removals included,
 * which leave no trace in managedFields.
 */
export const ANNOTATION_APPLIED_GENERATION = 'llm.nebari.dev/applied-generation';

/** `object` with the digest annotation of its body. */
export function withAppliedDigest<T extends { readonly metadata: object }>(object: T): T {
  const digest = createHash('sha256').update(JSON.stringify(object)).digest('base64url');
  const metadata = object.metadata as { readonly annotations?: Record<string, string> };
  return { ...object, metadata: { ...metadata, annotations: { ...metadata.annotations, [ANNOTATION_APPLIED_DIGEST]: digest } } };
}
