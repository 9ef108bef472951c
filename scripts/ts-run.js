#!/usr/bin/env node
// Runs a TypeScript entry point the way `ts-node --transpile-only` does (each file transpiled on
// its own with this project's compiler options, no type check), with the output cached on disk
// by content: a warm run loads no TypeScript compiler at all, which was most of `npm run synth`'s
// start-up (docs/performance.md). The compiler is loaded only for files that changed.
//   node scripts/ts-run.js <file.ts> [args...]
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cacheDir = path.join(root, 'node_modules', '.cache', 'nls-ts-run');
let compiler; // { ts, options, salt }, loaded on the first cache miss

function load() {
  if (compiler) return compiler;
  const ts = require('typescript');
  const configFile = path.join(root, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configFile, ts.sys.readFile).config, ts.sys, root);
  // CommonJS output, as the package is `type: commonjs` and ts-node emits for require().
  const options = { ...parsed.options, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, declaration: false, sourceMap: false, inlineSourceMap: true, inlineSources: false };
  compiler = { ts, options };
  return compiler;
}

// The cache key covers the source, the compiler's version and the project's compiler options.
const salt = (() => {
  const tsVersion = require(path.join(root, 'node_modules', 'typescript', 'package.json')).version;
  return `${tsVersion}\0${fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8')}\0v1`;
})();

function transpile(source, filename) {
  const key = crypto.createHash('sha256').update(salt).update('\0').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  const { ts, options } = load();
  const out = ts.transpileModule(source, { compilerOptions: options, fileName: filename, reportDiagnostics: false }).outputText;
  fs.mkdirSync(cacheDir, { recursive: true });
  const tmp = `${cached}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, out);
  fs.renameSync(tmp, cached); // atomic: parallel runs never read half a file
  return out;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(transpile(fs.readFileSync(filename, 'utf8'), filename), filename);
};

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/ts-run.js <file.ts> [args...]');
  process.exit(2);
}
const main = path.resolve(entry);
process.argv = [process.argv[0], main, ...args];
require.main = undefined;
require('node:module').runMain(main);
