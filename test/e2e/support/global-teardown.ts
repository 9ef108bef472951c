// Jest global teardown of the end-to-end project: stops the node, the control plane and the
// registry (also when tests failed), and removes the run's files unless NLS_E2E_KEEP is set.
import * as fs from 'fs';

export default async function globalTeardown(): Promise<void> {
  const run = globalThis.__nlsE2e;
  if (!run) return;
  await run.plane?.stop();
  await run.registry?.stop();
  if (process.env.NLS_E2E_KEEP) console.log(`e2e files kept in ${run.dir}${run.plane ? ` and ${run.plane.dir} (the node's pod logs in ${run.plane.dir}/node/pod-logs)` : ''}`);
  else fs.rmSync(run.dir, { recursive: true, force: true });
}
