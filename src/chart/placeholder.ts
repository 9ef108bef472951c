// A minimal chart so `npm run synth` has something to write until the chart writer lands.
import type { GeneratedFile } from '../generate';
import { generatedHeader } from '../generate';
import { version } from '../version';

export function placeholderChartFiles(): GeneratedFile[] {
  const dir = 'charts/nebari-llm-serving';
  return [
    {
      path: `${dir}/Chart.yaml`,
      content: `${generatedHeader()}apiVersion: v2\nname: nebari-llm-serving\nversion: ${version}\nappVersion: "${version}"\ndescription: LLM serving pack for Kubernetes (placeholder chart)\ntype: application\n`,
    },
    { path: `${dir}/values.yaml`, content: `${generatedHeader()}{}\n` },
  ];
}
