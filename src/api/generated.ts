// The files the API layer contributes to `npm run synth`: one CRD per kind and the reference.
import type { GeneratedFile } from '../generated-file';
import { crdFiles } from './kinds';
import { crdReferenceDoc } from './reference-docs';

export function apiGeneratedFiles(): GeneratedFile[] {
  return [...crdFiles(), crdReferenceDoc()];
}
