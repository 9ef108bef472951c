// The types of a custom-build file (docs/custom-builds.md), for a TypeScript build to be
// type-checked: `export default { … } satisfies CustomBuildConfig;`. Published as
// `nebari-llm-serving/build` (types only: package.json `typesVersions`).
export type { CustomBuildConfig, CustomBuildModel, ValuesOverrides } from './chart/build-config';
