// Jest global teardown: stops everything global setup started (it also runs when tests fail;
// processes.ts kills the children if the run is interrupted).
import * as fs from 'fs';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__nlsRegistry?.stop();
  await globalThis.__nlsControlPlane?.stop();
  if (globalThis.__nlsHelmHome) fs.rmSync(globalThis.__nlsHelmHome, { recursive: true, force: true });
}
