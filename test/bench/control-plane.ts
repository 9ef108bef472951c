// Benchmark: how long the test control plane takes to start once the tools are built (warm),
// in both modes. Median of a few runs.
import { startControlPlane, type ControlPlaneMode } from '../support/control-plane';

export async function run(runs = 3): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  for (const mode of ['apiserver', 'cluster'] as ControlPlaneMode[]) {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = process.hrtime.bigint();
      const plane = await startControlPlane({ mode });
      times.push(Number(process.hrtime.bigint() - started) / 1e9);
      await plane.stop();
    }
    times.sort((a, b) => a - b);
    figures[`control plane start, ${mode} mode, median s`] = times[Math.floor(times.length / 2)];
    figures[`control plane start, ${mode} mode, max s`] = times[times.length - 1];
  }
  return figures;
}

if (require.main === module) {
  run().then((f) => console.table(f), (e) => { console.error(e); process.exit(1); });
}
