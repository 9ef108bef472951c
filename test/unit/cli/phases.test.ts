// The phase runner: plans, resume points, exit codes and what a failure prints.
import { ExitCode, type Phase, RefusedError, phasesToRun, planLines, resumeCommand, runPhases } from '../../../src/cli/phases';

interface Ctx {
  ran: string[];
  failAt?: string;
  refuseAt?: string;
}

const phase = (name: string, readOnly = false): Phase<Ctx> => ({
  name,
  title: `do ${name}`,
  waitsFor: `${name} to be done`,
  readOnly,
  actions: () => [`action of ${name}`],
  run: async (c, r) => {
    if (c.refuseAt === name) throw new RefusedError(`${name} refuses`);
    if (c.failAt === name) throw new Error(`${name} broke`);
    r.note(`${name} progress`);
    c.ran.push(name);
  },
});

const phases = [phase('check', true), phase('crds'), phase('guard'), phase('controller'), phase('activate'), phase('unguard')];

async function run(ctx: Ctx, opts: { resumeFrom?: string; dryRun?: boolean } = {}) {
  const lines: string[] = [];
  let t = 0;
  const code = await runPhases(phases, ctx, { command: ['nls', 'upgrade', '--version', '1.0.0'], out: (l) => lines.push(l), now: () => (t += 1000), onFailure: () => 'the guard stays', ...opts });
  return { code, lines };
}

describe('phasesToRun', () => {
  test('runs everything without a resume point', () => {
    expect(phasesToRun(phases).map((p) => p.skipped)).toEqual([false, false, false, false, false, false]);
  });

  test('resuming skips the changing phases before the resume point but still runs read-only checks', () => {
    expect(phasesToRun(phases, 'controller').map((p) => `${p.phase.name}:${p.skipped ? 'skip' : 'run'}`)).toEqual([
      'check:run', 'crds:skip', 'guard:skip', 'controller:run', 'activate:run', 'unguard:run',
    ]);
  });

  test('an unknown or read-only resume point is a usage error listing the phases', () => {
    expect(() => phasesToRun(phases, 'nope')).toThrow('--resume-from "nope" is not a phase of this command; use one of: crds, guard, controller, activate, unguard');
    expect(() => phasesToRun(phases, 'check')).toThrow(/is not a phase/);
  });
});

describe('planLines (--dry-run)', () => {
  test('numbers every phase with its actions and what it waits for', () => {
    expect(planLines(phases, { ran: [] }).slice(0, 7)).toEqual([
      '1. check: do check (check, changes nothing)',
      '     - action of check',
      '     waits for: check to be done',
      '2. crds: do crds',
      '     - action of crds',
      '     waits for: crds to be done',
      '3. guard: do guard',
    ]);
  });

  test('marks skipped phases when resuming', () => {
    const plan = planLines(phases, { ran: [] }, 'activate');
    expect(plan).toContain('3. guard: do guard (skipped: resuming later)');
    expect(plan).toContain('5. activate: do activate');
    expect(plan).not.toContain('     - action of guard');
  });
});

describe('runPhases', () => {
  test('runs in order, reports progress and elapsed time, exits 0', async () => {
    const ctx: Ctx = { ran: [] };
    const { code, lines } = await run(ctx);
    expect(code).toBe(ExitCode.ok);
    expect(ctx.ran).toEqual(['check', 'crds', 'guard', 'controller', 'activate', 'unguard']);
    expect(lines).toContain('==> [4/6] controller: do controller');
    expect(lines).toContain('    waits for: controller to be done');
    expect(lines).toContain('    controller progress');
    expect(lines).toContain('    done in 1.0 s');
    expect(lines[lines.length - 1]).toMatch(/^completed in \d+\.\d s$/);
  });

  test('--dry-run prints the plan and runs nothing', async () => {
    const ctx: Ctx = { ran: [] };
    const { code, lines } = await run(ctx, { dryRun: true });
    expect(code).toBe(ExitCode.ok);
    expect(ctx.ran).toEqual([]);
    expect(lines[0]).toBe('plan (dry run, nothing is changed):');
  });

  test('a failure after changes exits 4 and prints what stays and the command to resume', async () => {
    const ctx: Ctx = { ran: [], failAt: 'activate' };
    const { code, lines } = await run(ctx);
    expect(code).toBe(ExitCode.phaseFailed);
    expect(ctx.ran).toEqual(['check', 'crds', 'guard', 'controller']);
    expect(lines).toContain('!!! activate failed after 1.0 s: activate broke');
    expect(lines).toContain('    the guard stays');
    expect(lines).toContain('      nls upgrade --version 1.0.0 --resume-from activate');
  });

  test('a refusal before any change exits 3 and says nothing changed', async () => {
    const { code, lines } = await run({ ran: [], refuseAt: 'check' });
    expect(code).toBe(ExitCode.refused);
    expect(lines).toContain('!!! check refused after 1.0 s: check refuses');
    expect(lines).toContain('    Nothing was changed.');
  });

  test('a refusal inside a changing phase after earlier changes still exits 4 (something changed)', async () => {
    const { code } = await run({ ran: [], refuseAt: 'guard' });
    expect(code).toBe(ExitCode.phaseFailed);
  });

  test('resuming runs the check, skips to the resume point, and an unknown point exits 2', async () => {
    const ctx: Ctx = { ran: [] };
    const { code, lines } = await run(ctx, { resumeFrom: 'activate' });
    expect(code).toBe(ExitCode.ok);
    expect(ctx.ran).toEqual(['check', 'activate', 'unguard']);
    expect(lines).toContain('--- [3/6] guard: skipped (resuming from activate)');
    expect((await run({ ran: [] }, { resumeFrom: 'later' })).code).toBe(ExitCode.usage);
  });
});

describe('resumeCommand', () => {
  test('replaces an earlier --resume-from, drops --dry-run and quotes what the shell would split', () => {
    expect(resumeCommand(['nls', 'upgrade', '--resume-from', 'guard', '-f', 'my values.yaml', '--dry-run'], 'activate')).toBe(
      "nls upgrade -f 'my values.yaml' --resume-from activate",
    );
    expect(resumeCommand(['nls', 'rollback', '--resume-from=guard', '--to', '0.2.0'], 'unguard')).toBe('nls rollback --to 0.2.0 --resume-from unguard');
  });
});
