import { parse } from 'yaml';
import { chartYaml } from '../../../src/chart/chart-yaml';
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
});
