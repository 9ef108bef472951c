// The content of a custom-build file (docs/custom-builds.md) as TypeScript types, so a build
// written in TypeScript is type-checked. Types only, importing little: `tsc` on a build file
// stays quick.
import type { API_GROUP_VERSION, API_GROUP_VERSION_V1BETA1 } from '../api/common';
import type { ChartValues } from './values-schema';

/** Every key optional at every depth: a build sets only what differs from the chart's defaults (lists are replaced whole, as Helm does). */
export type ValuesOverrides<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: ValuesOverrides<T[K]> } : T;

/** A model of a build, as you would `kubectl apply` it (the spec is checked by the admission the cluster runs). */
export interface CustomBuildModel {
  apiVersion: typeof API_GROUP_VERSION_V1BETA1 | typeof API_GROUP_VERSION;
  kind: 'LLMModel' | 'PassthroughModel';
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

/**
 * A build file's content (docs/custom-builds.md). A TypeScript build is type-checked against it:
 * `export default { values: { … } } satisfies CustomBuildConfig;` (import it from
 * `nebari-llm-serving/build`, or `src/build` in a checkout), so a misspelt value key fails `tsc`.
 */
export interface CustomBuildConfig {
  /** Release name and namespace. @default nebari-llm-serving in nebari-llm-serving-system */
  release?: { name?: string; namespace?: string };
  /** Chart values overriding the defaults (checked against values.schema.json). */
  values?: ValuesOverrides<ChartValues>;
  /** The static LLMModel / PassthroughModel objects of the release. */
  models?: CustomBuildModel[];
}
