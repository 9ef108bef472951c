// The e2e node's cgroup bookkeeping, on a directory tree shaped like /sys/fs/cgroup on a hybrid
// host (cgroup v1 hierarchies plus the v2 tree in `unified`). Plain directories stand in for
// cgroups: removal is the same rmdir, deepest first.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { removeCgroups, runCgroupDirs } from '../../support/node';

let base: string;
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-cgroup-test-'));
  for (const h of ['cpu', 'memory', 'systemd', 'unified']) fs.mkdirSync(path.join(base, h));
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

describe('the run\'s cgroups', () => {
  it('are created in every v1 hierarchy kubelet checks, not in the unified tree', () => {
    const dirs = runCgroupDirs('nls-e2e-1', base);
    expect(dirs.create.sort()).toEqual(['cpu', 'memory', 'systemd'].map((h) => path.join(base, h, 'nls-e2e-1')));
  });

  it('are all removed at the end, including the tree runc leaves in the unified hierarchy', () => {
    const dirs = runCgroupDirs('nls-e2e-1', base);
    for (const d of dirs.create) fs.mkdirSync(path.join(d, 'kubepods', 'pod-a'), { recursive: true });
    // What runc makes on a hybrid host for each pod, and what every e2e run used to leave behind.
    for (const pod of ['pod-a', 'pod-b']) fs.mkdirSync(path.join(base, 'unified', 'nls-e2e-1', 'kubepods', pod), { recursive: true });
    // Another run's tree is not ours.
    fs.mkdirSync(path.join(base, 'unified', 'nls-e2e-2'));
    removeCgroups(dirs.all);
    for (const h of ['cpu', 'memory', 'systemd', 'unified']) expect([h, fs.existsSync(path.join(base, h, 'nls-e2e-1'))]).toEqual([h, false]);
    expect(fs.existsSync(path.join(base, 'unified', 'nls-e2e-2'))).toBe(true);
  });
});
