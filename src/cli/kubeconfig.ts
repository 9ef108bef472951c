// How every cluster command finds its cluster, as kubectl does: --kubeconfig, else $KUBECONFIG,
// else ~/.kube/config, else the pod's ServiceAccount; --context picks a context of it. Without any
// of them client-node would fall back to http://localhost:8080 and fail with a TLS message that
// names none of this, so the absence is an error of its own.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { UsageError } from './phases';

const serviceAccountToken = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Where a kubeconfig was looked for, or undefined when one of them exists. */
export function missingKubeconfig(env: NodeJS.ProcessEnv = process.env, home = os.homedir(), tokenFile = serviceAccountToken): string | undefined {
  const files = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  if (files.some((f) => fs.existsSync(f))) return undefined;
  if (files.length === 0 && fs.existsSync(path.join(home, '.kube', 'config'))) return undefined;
  if (files.length === 0 && env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && fs.existsSync(tokenFile)) return undefined;
  const checked = files.length > 0 ? `$KUBECONFIG (${files.join(path.delimiter)})` : `$KUBECONFIG, ${path.join(home, '.kube', 'config')}, in-cluster`;
  return `no kubeconfig found (checked ${checked}); use --kubeconfig`;
}

/** The kubeconfig of `--kubeconfig`/`--context`, or the default one; a missing file or context is a UsageError. */
export function kubeConfigFrom(kubeconfig?: string, context?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (kubeconfig) {
    if (!fs.existsSync(kubeconfig)) throw new UsageError(`--kubeconfig ${kubeconfig} does not exist; give the path of a kubeconfig file`);
    kc.loadFromFile(kubeconfig);
  } else {
    const missing = missingKubeconfig();
    if (missing) throw new UsageError(missing);
    kc.loadFromDefault();
  }
  if (context) {
    const names = kc.getContexts().map((c) => c.name);
    if (!names.includes(context)) throw new UsageError(`--context ${context} is not in the kubeconfig; its contexts: ${names.join(', ') || 'none'}`);
    kc.setCurrentContext(context);
  }
  return kc;
}
