// Benchmark: gateway translation of 1,000 models (the model matrix, cycled under unique names),
// as the operator does on a full resync. Reports models and objects per second (median of a few
// passes after a warm-up pass) and the size of the rendered JSON.
import { desiredGatewayObjects } from '../../src/translate/gateway';
import type { GatewayModel } from '../../src/translate/gateway';
import { matrixContext, modelMatrix } from '../unit/translate/gateway/model-matrix';

function thousandModels(count: number): GatewayModel[] {
  return Array.from({ length: count }, (_, i) => {
    const base = modelMatrix[i % modelMatrix.length].model;
    const name = `${base.metadata.name}-${i}`;
    return { ...base, metadata: { ...base.metadata, name, uid: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}` } } as GatewayModel;
  });
}

export async function run(models = 1000, passes = 5): Promise<Record<string, number>> {
  const input = thousandModels(models);
  const translateAll = () => input.map((m) => desiredGatewayObjects(m, matrixContext));

  const warm = translateAll();
  const errors = warm.reduce((n, t) => n + t.errors.length, 0);
  if (errors > 0) throw new Error(`${errors} translation errors in the benchmark input`);
  const objects = warm.reduce((n, t) => n + t.objects.length, 0);

  const seconds: number[] = [];
  for (let i = 0; i < passes; i++) {
    const started = process.hrtime.bigint();
    translateAll();
    seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  seconds.sort((a, b) => a - b);
  const median = seconds[Math.floor(seconds.length / 2)];
  return {
    models,
    'objects generated': objects,
    'median seconds per 1,000 models': median,
    'models per second': models / median,
    'objects per second': objects / median,
    'rendered JSON bytes': Buffer.byteLength(JSON.stringify(warm.map((t) => t.objects))),
  };
}

if (require.main === module) {
  run().then(
    (figures) => {
      for (const [key, value] of Object.entries(figures)) console.log(`${key}: ${Number(value.toPrecision(4))}`);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
