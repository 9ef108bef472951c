// A real OCI registry (go-containerregistry's registry, in memory) on 127.0.0.1 for helm push/pull.
import * as fs from 'fs';
import { ManagedProcess, freePort, startProcess, waitFor } from './processes';
import { toolPaths } from './tools';

export interface Registry {
  /** `127.0.0.1:<port>`; use with `oci://` and helm's `--plain-http`. */
  readonly address: string;
  stop(): Promise<void>;
}

export async function startRegistry(logDir: string): Promise<Registry> {
  const port = await freePort();
  // The registry listens on localhost, which resolves to 127.0.0.1 here.
  const proc: ManagedProcess = startProcess('registry', toolPaths().registry, [`-port=${port}`], { logDir });
  const address = `127.0.0.1:${port}`;
  await waitFor('OCI registry /v2/', async () => (await fetch(`http://${address}/v2/`)).ok, { process: proc, timeoutMs: 30000 });
  if (!fs.readFileSync(proc.logFile, 'utf8').includes(`serving on port ${port}`)) {
    throw new Error(`the registry did not report serving on port ${port}:\n${proc.logTail()}`);
  }
  return { address, stop: () => proc.stop() };
}
