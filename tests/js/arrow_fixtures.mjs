// Arrow IPC / Feather v2 fixtures for the C reader's oracle test, written by
// apache-arrow (JS), the reference implementation's own writer, with the
// expected values beside them in oracle.json.
//   usage: node arrow_fixtures.mjs OUTDIR
// Compressed bodies: apache-arrow JS writes LZ4_FRAME and ZSTD bodies itself
// but ships no codec, so the codec registry gets one that pipes each buffer
// through the reference command-line compressors (`lz4`, `zstd`); the file
// layout (length prefixes, -1 for buffers left raw) is apache-arrow's.
// Codecs whose tool is missing are left out, and oracle.json says so.
// One fix to apache-arrow 21.2.0's writer: it stores each compressed buffer's
// *compressed* length in the int64 prefix, where the Arrow format (and
// pyarrow, which checks it) wants the *uncompressed* length; its own reader
// ignores the prefix, so the bug goes unnoticed there. The wrapper below
// rewrites each prefix that is not -1 with the buffer's uncompressed length,
// which makes the files what the format (and pyarrow) writes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as A from 'apache-arrow';

const out = process.argv[2];
if (!out) {
  console.error('usage: node arrow_fixtures.mjs OUTDIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });

function tool(name) {
  try {
    execFileSync(name, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const compressBuffers = A.RecordBatchWriter.prototype._compressBodyBuffers;
A.RecordBatchWriter.prototype._compressBodyBuffers = function (buffers) {
  const r = compressBuffers.call(this, buffers);
  buffers.forEach((b, i) => {
    const p = r.buffers[2 * i];
    if (p.length !== 8) return;
    const dv = new DataView(p.buffer, p.byteOffset, 8);
    if (dv.getBigInt64(0, true) !== -1n) dv.setBigInt64(0, BigInt(b.byteLength), true);
  });
  return r;
};
const codecs = [['none', null]];
if (tool('lz4')) {
  A.compressionRegistry.set(A.CompressionType.LZ4_FRAME, {
    encode: (d) => new Uint8Array(execFileSync('lz4', ['-q', '-c', '--content-size'], { input: d })),
  });
  codecs.push(['lz4', A.CompressionType.LZ4_FRAME]);
}
if (tool('zstd')) {
  A.compressionRegistry.set(A.CompressionType.ZSTD, {
    encode: (d) => new Uint8Array(execFileSync('zstd', ['-q', '-c', '-3'], { input: d })),
  });
  codecs.push(['zstd', A.CompressionType.ZSTD]);
}

// A small deterministic generator (no Math.random: fixtures are reproducible).
let seed = 12345;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (n) => Math.floor(rnd() * n);

function ints(n, lo, hi, nulls) {
  return Array.from({ length: n }, () => (nulls && rnd() < 0.2 ? null : lo + pick(hi - lo + 1)));
}
function bigs(n, signed, nulls) {
  const edge = signed ? [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n] : [0n, 2n ** 63n - 1n, 720575940000000000n];
  return Array.from({ length: n }, (_, i) => {
    if (nulls && rnd() < 0.2) return null;
    if (i < edge.length) return edge[i];
    const v = BigInt(pick(2 ** 31)) * BigInt(pick(2 ** 31)) + BigInt(pick(1000));
    return signed && rnd() < 0.5 ? -v : v;
  });
}
const words = ['ACh', 'GABA', 'Glu', 'DA', 'SER', 'OA', '', 'Kenyon cell', 'ünïcødé', 'a,b"c'];
const strs = (n, nulls) => Array.from({ length: n }, () => (nulls && rnd() < 0.2 ? null : words[pick(words.length)] + (rnd() < 0.5 ? String(pick(100000)) : '')));
const dictStrs = (n) => Array.from({ length: n }, () => (rnd() < 0.15 ? null : words[pick(6)]));

// Columns: name, arrow type, kind in oracle.json, values.
function columns(n) {
  return [
    ['i8', new A.Int8(), 'int', ints(n, -128, 127, true)],
    ['i16', new A.Int16(), 'int', ints(n, -32768, 32767, false)],
    ['i32', new A.Int32(), 'int', ints(n, -2147483648, 2147483647, true)],
    ['i64', new A.Int64(), 'int', bigs(n, true, true)],
    ['u8', new A.Uint8(), 'int', ints(n, 0, 255, false)],
    ['u16', new A.Uint16(), 'int', ints(n, 0, 65535, true)],
    ['u32', new A.Uint32(), 'int', ints(n, 0, 4294967295, false)],
    ['u64', new A.Uint64(), 'int', bigs(n, false, true)],
    ['f32', new A.Float32(), 'float', Array.from({ length: n }, () => (rnd() < 0.1 ? null : Math.fround((rnd() - 0.5) * 1e6)))],
    ['f64', new A.Float64(), 'float', Array.from({ length: n }, () => (rnd() < 0.1 ? null : (rnd() - 0.5) * 1e300 * rnd() ** 40))],
    ['flag', new A.Bool(), 'bool', Array.from({ length: n }, () => (rnd() < 0.1 ? null : rnd() < 0.5))],
    ['name', new A.Utf8(), 'string', strs(n, true)],
    ['large_name', new A.LargeUtf8(), 'string', strs(n, false)],
    ['nt', new A.Dictionary(new A.Utf8(), new A.Int32()), 'string', dictStrs(n)],
    ['nt8', new A.Dictionary(new A.Utf8(), new A.Int8()), 'string', dictStrs(n)],
  ];
}

function table(cols, batches) {
  const vecs = {};
  for (const [name, type, , values] of cols) vecs[name] = A.vectorFromArray(values, type);
  const whole = new A.Table(vecs);
  if (batches <= 1) return whole;
  // Cut into record batches that share each column's dictionary.
  const n = whole.numRows, parts = [];
  for (let b = 0; b < batches; b++) {
    const lo = Math.floor((n * b) / batches), hi = Math.floor((n * (b + 1)) / batches);
    parts.push(...whole.slice(lo, hi).batches);
  }
  return new A.Table(parts);
}

const show = (kind, v) => (v === null ? null : kind === 'int' ? String(v) : kind === 'bool' ? (v ? 1 : 0) : v);
const fixtures = [];
const shapes = [
  ['multi', 1000, 4],
  ['single', 37, 1],
  ['empty', 0, 1],
];
for (const [shape, n, batches] of shapes) {
  const cols = columns(n);
  const t = table(cols, batches);
  for (const [codec, ctype] of codecs) {
    for (const format of ['file', 'stream']) {
      const file = `${shape}-${codec}.${format === 'file' ? 'feather' : 'arrows'}`;
      writeFileSync(join(out, file), A.tableToIPC(t, format, ctype));
      fixtures.push({
        path: file, codec, format,
        columns: cols.map(([name, type, kind, values]) => ({ name, kind, type: String(type), values: values.map((v) => show(kind, v)) })),
      });
    }
  }
}
const missing = ['lz4', 'zstd'].filter((c) => !codecs.some(([k]) => k === c));
writeFileSync(join(out, 'oracle.json'), JSON.stringify({ label: 'arrow', missing_codecs: missing, fixtures }));
console.log(`arrow fixtures: ${fixtures.length} files in ${out}${missing.length ? ` (no ${missing.join(', ')} tool)` : ''}`);
