// A real Kubernetes node for the end-to-end suite: containerd + runc, kubelet and kube-proxy
// v1.35.4, running inside the test run's own namespaces (scripts/in-netns.sh). Nothing here
// touches the machine's network: the node's address lives on a veth pair created inside the run's
// network namespace, pods get addresses on a bridge in that namespace, and kube-proxy writes its
// iptables rules into that namespace's tables. containerd and kubelet share a mount namespace of
// their own, where tmpfs covers the host directories they write to by fixed paths. The only
// host-wide state is the cgroup directory named after this run, removed on stop.
import { execFileSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { ManagedProcess, startProcess, waitFor } from './processes';
import { toolPaths } from './tools';

export const NODE_NAME = 'e2e-node';
/** The node's address: on a veth pair that exists only inside the run's network namespace. */
export const NODE_ADDRESS = '10.200.0.1';
export const SERVICE_CIDR = '10.96.0.0/16';
export const POD_CIDR = '10.244.0.0/24';
const CLUSTER_DNS = '10.96.0.10';

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Interfaces of this process's network namespace. */
export function networkInterfaces(): string[] {
  return fs.readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean);
}

/**
 * Gives the run's network namespace the node address and a route for the Service range. Refuses
 * to run anywhere but inside scripts/in-netns.sh, so no interface or route is ever added to the
 * machine's own network.
 */
export function setUpNodeNetwork(): void {
  const interfaces = networkInterfaces();
  if (process.env.NLS_IN_NETNS !== '1' || interfaces.some((i) => i !== 'lo' && !['node0', 'node0p', 'cni0'].includes(i) && !i.startsWith('veth'))) {
    throw new Error(`the real node needs the run's own network namespace (scripts/in-netns.sh); interfaces here: ${interfaces.join(', ')}`);
  }
  if (interfaces.includes('node0')) return;
  // The kernel may lack the dummy driver; a veth pair with both ends inside works everywhere.
  run('ip', ['link', 'add', 'node0', 'type', 'veth', 'peer', 'name', 'node0p']);
  run('ip', ['addr', 'add', `${NODE_ADDRESS}/24`, 'dev', 'node0']);
  run('ip', ['link', 'set', 'node0', 'up']);
  run('ip', ['link', 'set', 'node0p', 'up']);
  // Without a route, a local dial of a ClusterIP fails before kube-proxy's OUTPUT DNAT sees it.
  run('ip', ['route', 'add', SERVICE_CIDR, 'dev', 'node0']);
  // Per-namespace settings: pod traffic is forwarded and seen by iptables on the bridge.
  fs.writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
  try {
    fs.writeFileSync('/proc/sys/net/bridge/bridge-nf-call-iptables', '1');
  } catch {
    // br_netfilter not loaded yet: the bridge plugin loads it; kube-proxy works with hairpin mode.
  }
}

export interface NodeCredentials {
  /** https URL of the API server on the node address. */
  readonly server: string;
  /** PEM the API server's certificate chains to. */
  readonly ca: Buffer;
  /** Token of `system:node:<NODE_NAME>` (group system:nodes). */
  readonly nodeToken: string;
  /** Token of `system:kube-proxy`. */
  readonly proxyToken: string;
}

export interface RealNode {
  readonly name: string;
  readonly dir: string;
  readonly processes: readonly ManagedProcess[];
  /** Memory (RSS, MiB) of kubelet, containerd and kube-proxy, for the suite's figures. */
  rssMiB(): Record<string, number>;
  stop(): Promise<void>;
}

/**
 * The run's cgroup directories under `base`: `create`, one per cgroup v1 hierarchy kubelet checks
 * (controllers and the named `systemd` one), made before kubelet starts; `all`, those plus the
 * cgroup v2 tree in `unified` (hybrid hosts), where runc also puts the run's pods and which the
 * teardown must remove too. A pure cgroup v2 host (no hierarchies, only the unified root) gives
 * no v1 directories.
 */
export function runCgroupDirs(cgroupRoot: string, base = '/sys/fs/cgroup'): { create: string[]; all: string[] } {
  const hierarchies = fs.readdirSync(base, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  const create = hierarchies.filter((h) => h !== 'unified').map((h) => path.join(base, h, cgroupRoot));
  const all = hierarchies.map((h) => path.join(base, h, cgroupRoot));
  return { create, all };
}

function kubeconfig(creds: NodeCredentials, user: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server: creds.server, 'certificate-authority-data': creds.ca.toString('base64') } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user } }],
    'current-context': 'e2e',
  });
}

function containerdConfig(dir: string, pauseImage: string): string {
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${dir}/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage}"
  disable_apparmor = true
  # Sandboxes get oom_score_adj -998, which needs CAP_SYS_RESOURCE; sandboxed machines drop it.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${dir}/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${dir}/certs.d"
`;
}

/**
 * Starts containerd, kubelet and kube-proxy and waits until the node is Ready. `pauseImage` must
 * already be in the registry at `registryHost` (plain HTTP, 127.0.0.1).
 */
export async function startRealNode(opts: {
  dir: string;
  creds: NodeCredentials;
  registryHost: string;
  pauseImage: string;
  isReady: () => Promise<boolean>;
}): Promise<RealNode> {
  const tools = toolPaths();
  const dir = path.join(opts.dir, 'node');
  fs.mkdirSync(dir, { recursive: true });
  const processes: ManagedProcess[] = [];
  // A cgroup root of this run's own, so parallel runs never share (cgroupfs is machine-wide).
  const cgroupRoot = `nls-e2e-${crypto.randomBytes(4).toString('hex')}`;
  const cgroups = runCgroupDirs(cgroupRoot);

  const write = (file: string, content: string) => fs.writeFileSync(path.join(dir, file), content);
  fs.mkdirSync(path.join(dir, 'cni', 'net.d'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'certs.d', opts.registryHost), { recursive: true });
  write('containerd.toml', containerdConfig(dir, opts.pauseImage));
  write(path.join('certs.d', opts.registryHost, 'hosts.toml'), `server = "http://${opts.registryHost}"\n[host."http://${opts.registryHost}"]\n  capabilities = ["pull", "resolve"]\n`);
  write(
    path.join('cni', 'net.d', '10-e2e.conflist'),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: 'e2e',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: path.join(dir, 'cni', 'ipam') },
        },
      ],
    }),
  );
  // Pods get a resolver address nothing answers on (there is no cluster DNS in the suite).
  write('resolv.conf', `nameserver ${CLUSTER_DNS}\n`);
  write('kubelet.kubeconfig', kubeconfig(opts.creds, `system:node:${NODE_NAME}`, opts.creds.nodeToken));
  write('kube-proxy.kubeconfig', kubeconfig(opts.creds, 'system:kube-proxy', opts.creds.proxyToken));
  write(
    'kubelet.yaml',
    JSON.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // Many CI machines still mount cgroup v1; 1.35 refuses it unless told otherwise.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: `/${cgroupRoot}`,
      containerRuntimeEndpoint: `unix://${dir}/containerd.sock`,
      address: NODE_ADDRESS,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      // The kubelet port is reachable only inside the run's network namespace.
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      failSwapOn: false,
      resolvConf: path.join(dir, 'resolv.conf'),
      clusterDNS: [CLUSTER_DNS],
      clusterDomain: 'cluster.local',
      podLogsDir: path.join(dir, 'pod-logs'),
      maxPods: 40,
      serializeImagePulls: false,
      rotateCertificates: false,
      serverTLSBootstrap: false,
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    }),
  );
  write(
    'kube-proxy.yaml',
    JSON.stringify({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: path.join(dir, 'kube-proxy.kubeconfig') },
      mode: 'iptables',
      hostnameOverride: NODE_NAME,
      clusterCIDR: '10.244.0.0/16',
      bindAddress: NODE_ADDRESS,
      healthzBindAddress: '127.0.0.1:10256',
      metricsBindAddress: '127.0.0.1:10249',
      // 0 leaves the machine-wide conntrack settings alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { localhostNodePorts: false },
    }),
  );

  const stop = async () => {
    for (const p of [...processes].reverse().filter((p) => p.name !== 'containerd' && p.name !== 'node-mounts')) await p.stop();
    // Containers and their shims outlive kubelet; end them before containerd and the mounts.
    killCgroupProcesses(cgroups.all);
    killProcesses((cmdline) => cmdline.includes('containerd-shim') && cmdline.includes(dir));
    for (const p of [...processes].reverse()) await p.stop(2000);
    removeCgroups(cgroups.all);
  };

  try {
    // The mount namespace containerd and kubelet share: tmpfs over the host paths they write to
    // by fixed names (shim sockets in /run/containerd, the CNI cache in /var/lib/cni, container
    // log links in /var/log), and a resolver that answers nothing instead of the host's.
    const ready = path.join(dir, 'mounts-ready');
    const mounts = startProcess('node-mounts', 'unshare', [
      '--mount',
      '--propagation',
      'private',
      'bash',
      '-c',
      'set -e; for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=755 tmpfs "$d"; done; ' +
        'echo "nameserver 127.0.0.1" > /run/resolv.conf; mount --bind /run/resolv.conf /etc/resolv.conf; ' +
        `touch ${ready}; exec sleep infinity`,
    ], { logDir: dir });
    processes.push(mounts);
    await waitFor('the node mount namespace', async () => fs.existsSync(ready), { process: mounts, timeoutMs: 10000 });
    const inNode = (name: string, binary: string, args: string[]) => {
      const p = startProcess(name, 'nsenter', [`--mount=/proc/${mounts.child.pid}/ns/mnt`, '--', binary, ...args], { logDir: dir });
      processes.push(p);
      return p;
    };

    const containerd = inNode('containerd', 'containerd', ['--config', path.join(dir, 'containerd.toml')]);
    await waitFor('containerd socket', async () => fs.existsSync(path.join(dir, 'containerd.sock')), { process: containerd, timeoutMs: 30000 });

    for (const d of cgroups.create) fs.mkdirSync(d, { recursive: true });
    // A new cpuset cgroup starts with no CPUs or memory nodes; copy the parent's.
    const cpuset = cgroups.create.find((d) => d.includes('/cpuset/'));
    if (cpuset) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) fs.writeFileSync(path.join(cpuset, f), fs.readFileSync(path.join(path.dirname(cpuset), f)));
    }
    const kubelet = inNode('kubelet', tools.kubelet, [
      `--config=${path.join(dir, 'kubelet.yaml')}`,
      `--kubeconfig=${path.join(dir, 'kubelet.kubeconfig')}`,
      `--root-dir=${path.join(dir, 'kubelet')}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_ADDRESS}`,
      '--v=1',
    ]);
    await waitFor(`node ${NODE_NAME} Ready`, opts.isReady, { process: kubelet, timeoutMs: 120000, intervalMs: 500 });
    const proxy = inNode('kube-proxy', tools.kubeProxy, [`--config=${path.join(dir, 'kube-proxy.yaml')}`, '--v=1']);
    await waitFor('kube-proxy /healthz', async () => (await fetch('http://127.0.0.1:10256/healthz')).ok, { process: proxy, timeoutMs: 60000 });
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    name: NODE_NAME,
    dir,
    processes,
    rssMiB: () => Object.fromEntries(processes.filter((p) => p.name !== 'node-mounts').map((p) => [p.name, rssMiB(p.child.pid)])),
    stop,
  };
}

/** Resident memory of a process in MiB (0 when it is gone). */
export function rssMiB(pid: number | undefined): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : 0;
  } catch {
    return 0;
  }
}

function walkDirs(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  const out: string[] = [];
  const visit = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch (error) {
      // The kubelet or runc may remove a pod's cgroup while we walk: gone is what we want.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const e of entries) if (e.isDirectory()) visit(path.join(d, e.name));
    out.push(d);
  };
  visit(root);
  return out;
}

function killCgroupProcesses(cgroupDirs: string[]): void {
  for (const d of cgroupDirs.flatMap(walkDirs)) {
    let procs = '';
    try {
      procs = fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8');
    } catch {
      continue;
    }
    for (const pid of procs.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

function killProcesses(match: (cmdline: string) => boolean): void {
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone, or not ours to read
    }
  }
}

/** Removes the run's cgroup trees, deepest first; a cgroup empties a moment after its last process dies. */
export function removeCgroups(cgroupDirs: string[]): void {
  for (let attempt = 0; attempt < 50; attempt++) {
    let left = 0;
    for (const d of cgroupDirs.flatMap(walkDirs)) {
      try {
        fs.rmdirSync(d);
      } catch {
        left++;
      }
    }
    if (left === 0) return;
    // The pause of a bounded retry (the kernel frees a cgroup once its last task has exited).
    execFileSync('sleep', ['0.1']);
  }
  process.stderr.write(`warning: could not remove every cgroup under ${cgroupDirs.join(', ')}\n`);
}
