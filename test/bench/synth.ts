// Benchmark: `npm run synth` wall time (regenerate every committed file and package the chart),
// median of a few runs, with no custom build and with a custom build declaring 1,000 static
// PassthroughModels (each translated into its gateway objects).
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { stringify } from 'yaml';
import { median } from './support/stats';

const root = path.resolve(__dirname, '..', '..');
const BACKENDS = [
  { type: 'OpenAI', hostname: 'api.openai.com' },
  { type: 'Anthropic' },
  { type: 'Bedrock', bedrock: { region: 'us-east-1' } },
] as const;

/** A custom-build config with `count` PassthroughModels of every backend type. */
export function staticModelsConfig(count: number): unknown {
  return {
    values: { platform: { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } } },
    models: Array.from({ length: count }, (_, i) => {
      const backend = BACKENDS[i % BACKENDS.length];
      const { type, ...rest } = backend;
      return {
        apiVersion: 'llm.nebari.dev/v1beta1',
        kind: 'PassthroughModel',
        metadata: { name: `model-${String(i).padStart(4, '0')}` },
        spec: {
          provider: {
            backend: { type, ...('bedrock' in rest ? { bedrock: rest.bedrock } : {}) },
            ...('hostname' in rest ? { hostname: rest.hostname } : {}),
            // Bedrock signs with the gateway's AWS workload identity, so it takes no key Secret.
            ...(type === 'Bedrock' ? {} : { credential: { secretRef: { name: `key-${i}` } } }),
          },
          models: { declared: [`m-${i}`] },
          access: { groups: ['llm-users'] },
        },
      };
    }),
  };
}

/** CPU seconds of this process's waited-for children (cutime + cstime in /proc/self/stat). */
function childrenCpuSeconds(): number {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return (Number(fields[13]) + Number(fields[14])) / ticks;
}

/** Median wall and CPU seconds of `npm run synth -- args`; CPU shows the cost on a busy machine. */
function timeSynth(args: string[], runs: number): { wall: number; cpu: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const cpuBefore = childrenCpuSeconds();
    const started = process.hrtime.bigint();
    execFileSync('npm', ['run', '--silent', 'synth', '--', ...args], { cwd: root, stdio: 'pipe' });
    wall.push(Number(process.hrtime.bigint() - started) / 1e9);
    cpu.push(childrenCpuSeconds() - cpuBefore);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

export async function run(runs = 3, models = 1000): Promise<Record<string, number>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-bench-synth-'));
  try {
    const config = path.join(dir, 'build.yaml');
    fs.writeFileSync(config, stringify(staticModelsConfig(models), { aliasDuplicateObjects: false }));
    const none = timeSynth([], runs);
    const thousand = timeSynth(['--config', config, '--out', path.join(dir, 'out')], runs);
    const modelsBytes = fs.statSync(path.join(dir, 'out', 'models.yaml')).size;
    return {
      'npm run synth, 0 static models, median wall s': none.wall,
      'npm run synth, 0 static models, median CPU s': none.cpu,
      [`npm run synth, ${models} static models, median wall s`]: thousand.wall,
      [`npm run synth, ${models} static models, median CPU s`]: thousand.cpu,
      [`models.yaml for ${models} models, MiB`]: modelsBytes / 1048576,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run().then((f) => console.table(f), (e) => { console.error(e); process.exit(1); });
}
