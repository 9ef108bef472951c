import { parse } from 'yaml';
import { chartYaml } from '../../../src/chart/chart-yaml';
import { chartReadme } from '../../../src/chart/readme';
import { crdObjects } from '../../../src/api/kinds';
import pkg from '../../../package.json';

describe('Chart.yaml', () => {
  const chart = parse(chartYaml());

  test('takes its version from package.json', () => {
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'nebari-llm-serving', version: pkg.version, appVersion: pkg.version, type: 'application' });
    expect(chart.kubeVersion).toMatch(/^>=1\.\d+/);
  });

  test('carries Artifact Hub metadata as embedded YAML', () => {
    const crds = parse(chart.annotations['artifacthub.io/crds']);
    expect(crds.map((c: { kind: string }) => c.kind)).toEqual(['LLMModel', 'PassthroughModel', 'AgentDeployment']);
    expect(parse(chart.annotations['artifacthub.io/images'])).toEqual([{ name: 'operator', image: `nebari/nebari-llm-serving:${pkg.version}` }]);
    expect(parse(chart.annotations['artifacthub.io/changes']).length).toBeGreaterThan(0);
    expect(chart.annotations['artifacthub.io/prerelease']).toBe('false');
  });

  test('names each CRD at the version it stores (v1beta1), as the chart README does', () => {
    const stored = Object.fromEntries(crdObjects().map((crd) => [crd.spec.names.kind, crd.spec.versions.find((v) => v.storage)!.name]));
    const crds = parse(chart.annotations['artifacthub.io/crds']) as { kind: string; version: string }[];
    expect(crds.map((c) => [c.kind, c.version])).toEqual(crds.map((c) => [c.kind, stored[c.kind]]));
    expect(crds.every((c) => c.version === 'v1beta1')).toBe(true);
    const readme = chartReadme('# generated');
    expect(readme).toContain('(`llm.nebari.dev/v1beta1`; `v1alpha1` is still served, deprecated)');
  });
});
