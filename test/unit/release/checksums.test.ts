import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checksumsFile, parseChecksums, sha256File } from '../../../scripts/release/checksums';

const HELLO = '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03'; // sha256("hello\n")
const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'; // sha256("")
const THREE_MIB_A = '6f850bc94ae6f7de14297c01616c36d712d22864497b28a63b81d776b035e656'; // sha256 of 3 MiB of "a"

describe('sha256File', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-checksums-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('hashes small, empty and multi-chunk files like sha256sum', () => {
    fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello\n');
    fs.writeFileSync(path.join(dir, 'empty'), '');
    fs.writeFileSync(path.join(dir, 'big'), Buffer.alloc(3 * 1024 * 1024, 'a'));
    expect(sha256File(path.join(dir, 'hello.txt'))).toBe(HELLO);
    expect(sha256File(path.join(dir, 'empty'))).toBe(EMPTY);
    expect(sha256File(path.join(dir, 'big'))).toBe(THREE_MIB_A);
  });

  test('a missing file throws', () => {
    expect(() => sha256File(path.join(dir, 'missing'))).toThrow('ENOENT');
  });
});

describe('checksumsFile', () => {
  test('writes "<hex>  <name>" lines sorted by name, each ending in a newline', () => {
    const text = checksumsFile([
      { name: 'sbom.cdx.json', sha256: HELLO },
      { name: 'nebari-llm-serving-0.3.0.tgz', sha256: EMPTY },
      { name: 'SBOM-upper.json', sha256: THREE_MIB_A },
    ]);
    expect(text).toBe(`${THREE_MIB_A}  SBOM-upper.json\n${EMPTY}  nebari-llm-serving-0.3.0.tgz\n${HELLO}  sbom.cdx.json\n`);
    expect(checksumsFile([])).toBe('');
  });

  test('refuses duplicate names, bad digests and names sha256sum would escape', () => {
    expect(() => checksumsFile([{ name: 'a', sha256: HELLO }, { name: 'a', sha256: EMPTY }])).toThrow('checksumsFile: a is listed twice');
    expect(() => checksumsFile([{ name: 'a', sha256: HELLO.toUpperCase() }])).toThrow('not 64 lowercase hex digits');
    expect(() => checksumsFile([{ name: 'a', sha256: HELLO.slice(1) }])).toThrow('not 64 lowercase hex digits');
    expect(() => checksumsFile([{ name: 'a\nb', sha256: HELLO }])).toThrow('has a backslash or line break');
    expect(() => checksumsFile([{ name: 'a\\b', sha256: HELLO }])).toThrow('has a backslash or line break');
    expect(() => checksumsFile([{ name: '', sha256: HELLO }])).toThrow('is empty');
  });
});

describe('parseChecksums', () => {
  test('is the inverse of checksumsFile', () => {
    const entries = [
      { name: 'a.tgz', sha256: HELLO },
      { name: 'b with space.json', sha256: EMPTY },
    ];
    expect(parseChecksums(checksumsFile(entries))).toEqual(entries);
    expect(checksumsFile(parseChecksums(checksumsFile(entries)))).toBe(checksumsFile(entries));
  });

  test('accepts binary-mode lines, upper-case hex, CRLF and blank lines; keeps file order', () => {
    expect(parseChecksums(`${HELLO} *z.bin\r\n\n${EMPTY.toUpperCase()}  a.txt`)).toEqual([
      { name: 'z.bin', sha256: HELLO },
      { name: 'a.txt', sha256: EMPTY },
    ]);
  });

  test('refuses malformed lines naming the line, and duplicates', () => {
    expect(() => parseChecksums(`${HELLO}  a\nnot a checksum line\n`)).toThrow('checksums line 2: expected "<sha256>  <name>", found "not a checksum line"');
    expect(() => parseChecksums(`${HELLO} a\n`)).toThrow('checksums line 1');
    expect(() => parseChecksums(`\\${HELLO}  a\\nb\n`)).toThrow('checksums line 1');
    expect(() => parseChecksums(`${HELLO}  a\n${EMPTY}  a\n`)).toThrow('checksums line 2: a is listed twice');
  });
});
