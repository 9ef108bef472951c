// Finding and loading a custom-build file (`npm run synth -- --config FILE`): YAML or JSON, or a
// JavaScript/TypeScript module whose default export is the config. Every failure is a
// BuildFileError whose message says which file, where in it, and what to do.
import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import { parse } from 'yaml';

/** The repository checkout this CLI runs from (its node_modules serve build modules too). */
const checkout = path.resolve(__dirname, '..', '..', '..');

/** A build file that cannot be found or read; exit 2 like any other config problem. */
export class BuildFileError extends Error {}

/**
 * The directory relative paths on the command line mean: the one `npm run` was called from.
 * npm runs scripts in the package root and passes the caller's directory as INIT_CWD; only trust
 * it inside our own script, since any process started under another npm script inherits it.
 */
export function callerDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.npm_lifecycle_event === 'synth' && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}

/** `file` resolved from the caller's directory; a missing file names every place it looked. */
export function resolveBuildFile(file: string, from = callerDirectory()): string {
  const abs = path.resolve(from, file);
  if (fs.existsSync(abs) && fs.statSync(abs).isFile()) return abs;
  const what = fs.existsSync(abs) ? 'is a directory, not a build file' : 'does not exist';
  const relative = path.isAbsolute(file) ? '' : ` (relative paths are resolved from the directory the command was run in, ${from})`;
  throw new BuildFileError(`--config: ${abs} ${what}${relative}`);
}

const MODULE_EXTENSIONS = /\.(ts|mts|cts|js|mjs|cjs)$/;
const TYPESCRIPT_EXTENSIONS = ['.ts', '.mts', '.cts'];

/** A build config from YAML/JSON, or from a module's default export. `abs` is an existing file. */
export function loadBuildFile(abs: string): unknown {
  if (MODULE_EXTENSIONS.test(abs)) return defaultExport(abs, loadModule(abs));
  try {
    return parse(fs.readFileSync(abs, 'utf8'));
  } catch (err) {
    throw new BuildFileError(`--config: ${abs} is not valid YAML (${(err as Error).message})`);
  }
}

/** Loads the TypeScript compiler from the build file's project or from this checkout. */
function typescript(abs: string): typeof import('typescript') {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(require.resolve('typescript', { paths: [path.dirname(abs), checkout] })) as typeof import('typescript');
  } catch {
    throw new BuildFileError(`--config: ${abs} is TypeScript, and the typescript package is not installed beside it or in ${checkout}; install it, or write the build as YAML or JavaScript`);
  }
}

/** CommonJS output of a TypeScript file; a syntax error is reported as `file:line:column: message`. */
function transpile(abs: string): string {
  const ts = typescript(abs);
  const source = fs.readFileSync(abs, 'utf8');
  const out = ts.transpileModule(source, {
    fileName: abs,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, inlineSourceMap: true },
  });
  // The first error only: later ones are mostly the parser recovering from it.
  const first = (out.diagnostics ?? []).find((d) => d.category === ts.DiagnosticCategory.Error);
  if (first) {
    const { line, character } = first.file && first.start !== undefined ? first.file.getLineAndCharacterOfPosition(first.start) : { line: 0, character: 0 };
    throw new BuildFileError(`--config: ${abs}:${line + 1}:${character + 1}: syntax error: ${ts.flattenDiagnosticMessageText(first.messageText, '\n')}`);
  }
  return out.outputText;
}

/**
 * Lets build modules import what this checkout has installed (yaml, typebox…) wherever they live:
 * the checkout's node_modules is searched after the build's own. CommonJS resolution only; an
 * .mjs build resolves packages from its own directory, as Node does for ES modules.
 */
function addCheckoutModules(): void {
  const nodeModules = path.join(checkout, 'node_modules');
  const current = (process.env.NODE_PATH ?? '').split(path.delimiter).filter(Boolean);
  if (current.includes(nodeModules)) return;
  process.env.NODE_PATH = [...current, nodeModules].join(path.delimiter);
  (Module as unknown as { _initPaths(): void })._initPaths();
}

function loadModule(abs: string): unknown {
  addCheckoutModules();
  const hooks = (require.extensions ?? {}) as Record<string, (m: NodeJS.Module, filename: string) => void>;
  // .mts and .cts are transpiled to CommonJS like .ts (no top-level await, no import.meta).
  for (const ext of TYPESCRIPT_EXTENSIONS) {
    hooks[ext] ??= (m, filename) => (m as unknown as { _compile(code: string, filename: string): void })._compile(transpile(filename), filename);
  }
  // Checked first whatever hook runs it, so a syntax error names its line and column.
  if (TYPESCRIPT_EXTENSIONS.includes(path.extname(abs))) transpile(abs);
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(abs) as unknown; // .mjs: require(esm), Node >= 20.19
  } catch (err) {
    if (err instanceof BuildFileError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_REQUIRE_ASYNC_MODULE') throw new BuildFileError(`--config: ${abs} uses top-level await, which a build module cannot; compute the config synchronously`);
    // The module's own frame: V8 puts `file:line` first for a syntax error, the stack has it otherwise.
    const at = e instanceof SyntaxError ? (e.stack ?? '').split('\n')[0] : (e.stack ?? '').split('\n').find((l) => l.includes(abs))?.trim();
    throw new BuildFileError(`--config: loading ${abs} failed: ${e.message}${at ? ` (${at})` : ''}`);
  }
}

/**
 * The config a module exports: its default export; a CommonJS `module.exports = {...}` is the
 * config itself. Named exports alone are a mistake worth naming.
 */
function defaultExport(abs: string, mod: unknown): unknown {
  const exports = (mod ?? {}) as Record<string, unknown>;
  const esModule = exports.__esModule === true || Object.prototype.toString.call(mod) === '[object Module]';
  if (!esModule && Object.keys(exports).length > 0) return mod;
  if (exports.default !== undefined) return exports.default;
  const named = Object.keys(exports).filter((k) => k !== 'default' && k !== '__esModule');
  const found = named.length > 0 ? `found named exports ${named.join(', ')}` : 'found no exports';
  throw new BuildFileError(`--config: ${abs}: "export default" expected, ${found}; export the config with \`export default { … }\``);
}
