// The single list of files that `npm run synth` writes into the work tree and that the staleness
// test regenerates and compares. Each layer contributes its own files through one function.
import { chartGeneratedFiles } from './chart/files';
import { apiGeneratedFiles } from './api/generated';
import type { GeneratedFile } from './generated-file';

/** Every committed generated file, in a stable order. */
export function generatedFiles(): GeneratedFile[] {
  return [...apiGeneratedFiles(), ...chartGeneratedFiles()];
}
