// Every generated file of this layer: the chart, the plain deploy/ bundles and the Argo CD example.
import { crdFiles } from '../api/kinds';
import type { GeneratedFile } from '../generated-file';
import { generatedHeader } from '../generated-file';
import { helpersTemplate, portalHelpersTemplate, spendHelpersTemplate, CHART_NAME } from '../../constructs';
import { argoCdApplicationYaml, argoCdGitOpsApplicationYaml } from './argocd';
import { deployBundleFiles } from './bundles';
import { chartYaml } from './chart-yaml';
import { CI_VALUES, ciValuesYaml } from './ci-values';
import { notesTxt } from './notes';
import { chartReadme } from './readme';
import { helmTemplates } from './render';
import { valuesYaml } from './values-file';
import { valuesJsonSchema } from './values-schema';

export const CHART_DIR = `charts/${CHART_NAME}`;

// ci/ holds test value sets; they stay in the repository, not in the package.
const HELMIGNORE = ['ci/', '.DS_Store', '.git/', '*.swp', '*.bak', '*.tmp', '*.orig', '*~', '.vscode/', '.idea/'];

/** charts/nebari-llm-serving/**: Chart.yaml, values, schema, templates, crds/ (identical to crds/), README. */
export function chartFiles(): GeneratedFile[] {
  const header = generatedHeader();
  const files: GeneratedFile[] = [
    { path: `${CHART_DIR}/Chart.yaml`, content: `${header}${chartYaml()}` },
    { path: `${CHART_DIR}/values.yaml`, content: `${header}${valuesYaml()}` },
    { path: `${CHART_DIR}/values.schema.json`, content: `${JSON.stringify({ $comment: header.replace(/^# /, '').trim(), ...valuesJsonSchema() }, null, 2)}\n` },
    { path: `${CHART_DIR}/.helmignore`, content: `${header}${HELMIGNORE.join('\n')}\n` },
    { path: `${CHART_DIR}/README.md`, content: chartReadme(header) },
    { path: `${CHART_DIR}/templates/_helpers.tpl`, content: `{{- /* ${header.replace(/^# /, '').trim()} */ -}}\n${helpersTemplate()}\n${portalHelpersTemplate()}\n${spendHelpersTemplate()}` },
    { path: `${CHART_DIR}/templates/NOTES.txt`, content: notesTxt(header) },
  ];
  for (const [file, text] of Object.entries(helmTemplates())) files.push({ path: `${CHART_DIR}/templates/${file}`, content: `${header}${text}` });
  for (const c of CI_VALUES) files.push({ path: `${CHART_DIR}/ci/${c.file}`, content: ciValuesYaml(c, header) });
  for (const crd of crdFiles()) files.push({ path: `${CHART_DIR}/${crd.path}`, content: crd.content });
  return files;
}

/** Everything this layer contributes to `generatedFiles()`. */
export function chartGeneratedFiles(): GeneratedFile[] {
  return [
    ...chartFiles(),
    ...deployBundleFiles(),
    { path: 'examples/argocd-application.yaml', content: `${generatedHeader()}${argoCdApplicationYaml()}` },
    { path: 'examples/argocd-gitops-application.yaml', content: `${generatedHeader()}${argoCdGitOpsApplicationYaml()}` },
  ];
}
