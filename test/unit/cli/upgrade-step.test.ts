// The N→N+1 rule of `nls upgrade` (RELEASES.md): the pure decision, and how the command shows it
// in its usage, its --dry-run plan and its flags.
import { runRollback } from '../../../src/cli/lifecycle/rollback';
import { runUpgrade, upgradeStepProblem, upgradeUsage } from '../../../src/cli/lifecycle/upgrade';

async function capture(run: (args: string[], out: (l: string) => void) => Promise<number>, args: string[]) {
  const lines: string[] = [];
  const code = await run(args, (l) => lines.push(l));
  return { code, text: lines.join('\n') };
}

describe('upgradeStepProblem', () => {
  test.each([
    ['0.2.0', '0.3.0', /0\.2\.0 → 0\.3\.0 moves to the next minor release line, 0\.3$/],
    ['0.2.3', '0.2.9', /0\.2\.3 → 0\.2\.9 stays in the release line 0\.2$/],
    ['0.3.0-rc.1', '0.3.0', /0\.3\.0-rc\.1 → 0\.3\.0 stays in/],
    ['0.3.0-rc.1', '0.3.0-rc.2', /stays in/],
    ['0.2.0', '0.3.0-rc.2', /0\.2\.0 → 0\.3\.0-rc\.2 moves to the next/],
    ['0.2.9', '0.3.4', /moves to the next/],
    ['0.9.1', '1.0.0', /0\.9\.1 → 1\.0\.0 is a major step, supported only from the newest 0\.x release line/],
    ['0.9.1', '1.0.2', /is a major step/],
    ['0.3.0', '0.3.0', /the release already runs 0\.3\.0/],
    ['0.3.0-rc.1', '0.3.0-rc.1', /already runs/],
  ])('%s → %s is allowed', (current, target, note) => {
    const step = upgradeStepProblem(current, target);
    expect(step.refuse).toBeUndefined();
    expect(step.note).toMatch(note);
  });

  test.each([
    ['0.2.0', '0.4.0', '0.3'],
    ['0.2.3', '0.4.0', '0.3'],
    ['0.2.0', '0.4.0-rc.1', '0.3'],
    ['0.2.0-rc.2', '0.4.0', '0.3'],
    ['0.2.0', '0.9.0', '0.3'],
    ['0.9.1', '1.1.0', '1.0'],
    ['0.9.1', '2.0.0', '1.0'],
    ['1.2.0', '1.4.1', '1.3'],
  ])('%s → %s skips %s and is refused', (current, target, line) => {
    const step = upgradeStepProblem(current, target);
    expect(step.note).toBeUndefined();
    expect(step.refuse).toBe(
      `upgrading ${current} → ${target} skips ${line}: upgrades are supported one minor release at a time (RELEASES.md); ` +
        `upgrade to the newest ${line}.x first, then to ${target}, or pass --allow-skip if the release notes of ${target} allow this skip`,
    );
  });

  test('the example of the brief, word for word', () => {
    expect(upgradeStepProblem('0.2.3', '0.4.0').refuse).toBe(
      'upgrading 0.2.3 → 0.4.0 skips 0.3: upgrades are supported one minor release at a time (RELEASES.md); upgrade to the newest 0.3.x first, then to 0.4.0, or pass --allow-skip if the release notes of 0.4.0 allow this skip',
    );
  });

  test('--allow-skip turns a skip into a warning naming both versions and the skipped line', () => {
    const step = upgradeStepProblem('0.2.0', '0.4.0', true);
    expect(step.refuse).toBeUndefined();
    expect(step.note).toMatch(/^warning: upgrading 0\.2\.0 → 0\.4\.0 skips 0\.3, .*--allow-skip.*release notes of 0\.4\.0/);
  });

  test('a major step from a line that may not be the last one is noted, not refused (semver.skippedLine cannot know the last minor)', () => {
    const step = upgradeStepProblem('0.8.0', '1.0.0');
    expect(step.refuse).toBeUndefined();
    expect(step.note).toMatch(/0\.8\.0 → 1\.0\.0 is a major step.*cannot tell whether 0\.8 is that line: check the release notes of 1\.0\.0/);
  });

  test.each([
    ['1.2.0', '1.1.0'],
    ['0.3.0', '0.2.9'],
    ['0.3.0', '0.3.0-rc.2'],
    ['1.0.0', '0.9.1'],
    ['0.2.1', '0.2.0'],
  ])('%s → %s is a downgrade: refused, even with --allow-skip, pointing to nls rollback --to', (current, target) => {
    for (const allowSkip of [false, true]) {
      const step = upgradeStepProblem(current, target, allowSkip);
      expect(step.refuse).toBe(`the target ${target} is older than the installed ${current}: nls upgrade does not downgrade; roll back with nls rollback --to ${target} (docs/upgrading.md, "Rolling back")`);
    }
  });

  test.each([
    ['0.2.0', '0.2.1-e2e', 'the target version 0.2.1-e2e is not a release version'],
    ['0.2.0', '0.2.1-test', 'the target version 0.2.1-test is not a release version'],
    ['0.2.1-e2e', '0.2.0', 'the installed chart version 0.2.1-e2e is not a release version'],
    ['0.2.0-dev.3', '0.9.0-dev.4', 'the installed chart version 0.2.0-dev.3 and the target version 0.9.0-dev.4 are not release versions'],
    ['', '0.4.0', 'the installed chart version (unreadable) is not a release version'],
    ['0.2.0', '0.4.0+build.1', 'the target version 0.4.0+build.1 is not a release version'],
  ])('%j → %j is not checked, only noted', (current, target, what) => {
    const step = upgradeStepProblem(current, target);
    expect(step).toEqual({ note: `N→N+1 check skipped: ${what} (X.Y.Z or X.Y.Z-rc.N)` });
  });

  test("the e2e suite's upgrade (this version to nextVersion's X.Y.Z+1-e2e) and back are not refused", () => {
    // test/e2e/support/state.ts nextVersion: `${major}.${minor}.${patch + 1}-e2e`.
    for (const version of ['0.2.0', '0.3.0-rc.1', '1.0.0']) {
      const [major, minor, patch] = version.replace(/-.*$/, '').split('.').map(Number);
      const next = `${major}.${minor}.${patch + 1}-e2e`;
      expect(upgradeStepProblem(version, next).refuse).toBeUndefined();
      expect(upgradeStepProblem(next, version).refuse).toBeUndefined();
    }
  });
});

describe('nls upgrade --allow-skip', () => {
  test('the usage and the --dry-run plan name the N→N+1 check', async () => {
    expect(upgradeUsage).toMatch(/--allow-skip {10}warn instead of refusing when V skips a minor release line/);
    const plain = await capture(runUpgrade, ['--chart', 'oci://r/nebari-llm-serving', '--version', '0.4.0', '--dry-run']);
    expect(plain.code).toBe(0);
    expect(plain.text).toContain('2. check: check the release, the N→N+1 upgrade step and that the target chart is published (check, changes nothing)');
    expect(plain.text).toContain('- N→N+1 rule (RELEASES.md): refuse 0.4.0 if it is older than the installed version or skips a minor release line (--allow-skip: warn instead)');
    const allowed = await capture(runUpgrade, ['--chart', 'oci://r/nebari-llm-serving', '--version', '0.4.0', '--allow-skip', '--dry-run']);
    expect(allowed.code).toBe(0);
    expect(allowed.text).toContain('- N→N+1 rule (RELEASES.md): refuse 0.4.0 if it is older than the installed version; --allow-skip: only warn if it skips a minor release line');
  });

  test('takes no value, and belongs to upgrade only', async () => {
    const valued = await capture(runUpgrade, ['--chart', 'oci://r/c', '--version', '0.4.0', '--allow-skip=yes', '--dry-run']);
    expect(valued.code).toBe(2);
    expect(valued.text).toContain('error: upgrade: --allow-skip takes no value');
    const rollback = await capture(runRollback, ['--to', '0.2.0', '--chart', 'oci://r/c', '--allow-skip', '--dry-run']);
    expect(rollback.code).toBe(2);
    expect(rollback.text).toContain('error: rollback: unknown flag --allow-skip');
  });
});
