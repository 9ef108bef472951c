// Stand-in for `huggingface-cli download <id> --local-dir <dir>` (nothing leaves the test's
// network): writes the files the engine stand-in checks for.
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
const localDir = args[args.indexOf('--local-dir') + 1];
if (args[0] !== 'download' || !args[1] || !localDir || args.indexOf('--local-dir') < 0) {
  console.error(`huggingface-cli stand-in: expected "download <model id> --local-dir <dir>", got ${JSON.stringify(args)}`);
  process.exit(2);
}
fs.mkdirSync(localDir, { recursive: true });
fs.writeFileSync(path.join(localDir, 'config.json'), JSON.stringify({ model: args[1], standIn: true }));
console.log(`downloaded ${args[1]} to ${localDir}`);
