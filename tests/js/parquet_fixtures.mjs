// Parquet fixtures for the C reader's oracle test, written by an independent
// implementation (parquet-wasm, i.e. the Rust `parquet` crate) from Arrow
// tables built with apache-arrow, plus expected.json with every value.
//
//   usage: node parquet_fixtures.mjs OUTDIR
//
// One table ("main": every type x every null pattern, 1000 rows) is written
// once per codec x writer version (data page v1 / v2) x encoding setup, with
// row groups of 256 rows; "pages" forces many small pages and a dictionary
// that overflows into plain pages mid-chunk; "empty" has no rows.
// expected.json: { tables: { NAME: { rows, columns: { COL: { kind, values }}}},
//                  fixtures: [ { file, table, codec, version, encoding } ] }
// Values: null for a null; integers as decimal strings (int64 exceeds 2^53);
// doubles as numbers, or "NaN" / "Infinity" / "-Infinity"; booleans; strings.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import pw from 'parquet-wasm/node';

const out = process.argv[2];
if (!out) {
  console.error('usage: node parquet_fixtures.mjs OUTDIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });

// A small deterministic generator (xorshift32), so fixtures are reproducible.
let seed = 0x9e3779b9;
function rnd() {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed;
}

const words = ['', 'ACH', 'GABA', 'glutamate', 'dopamine', 'Kenyon cell', 'ünïcødé', '神经元', 'x'.repeat(300)];
const TYPES = {
  bool: { arrow: () => new arrow.Bool(), kind: 'bool', gen: (i) => (rnd() & 1) === 1 },
  int8: { arrow: () => new arrow.Int8(), kind: 'int', gen: (i) => [-128, 127, 0][i % 7] ?? ((rnd() % 256) - 128) },
  int16: { arrow: () => new arrow.Int16(), kind: 'int', gen: (i) => [-32768, 32767][i % 11] ?? ((rnd() % 65536) - 32768) },
  int32: { arrow: () => new arrow.Int32(), kind: 'int', gen: (i) => [-2147483648, 2147483647][i % 13] ?? (rnd() | 0) },
  int64: {
    arrow: () => new arrow.Int64(), kind: 'int', big: true,
    gen: (i) => [-(2n ** 63n), 2n ** 63n - 1n][i % 17] ?? (BigInt(rnd()) << 32n | BigInt(rnd())) - (2n ** 63n),
  },
  uint8: { arrow: () => new arrow.Uint8(), kind: 'int', gen: (i) => [255, 0][i % 5] ?? (rnd() % 256) },
  uint16: { arrow: () => new arrow.Uint16(), kind: 'int', gen: (i) => [65535][i % 9] ?? (rnd() % 65536) },
  uint32: { arrow: () => new arrow.Uint32(), kind: 'int', gen: (i) => [4294967295][i % 7] ?? rnd() },
  // uint64 above INT64_MAX is an error by contract; stay below it here.
  uint64: { arrow: () => new arrow.Uint64(), kind: 'int', big: true,
    gen: (i) => [2n ** 63n - 1n, 0n][i % 19] ?? (BigInt(rnd()) << 31n | BigInt(rnd())) },
  float32: { arrow: () => new arrow.Float32(), kind: 'double', gen: (i) => Math.fround([NaN, Infinity, -0, 3.4e38][i % 23] ?? (rnd() / 7 - 3e8)) },
  float64: { arrow: () => new arrow.Float64(), kind: 'double', gen: (i) => [NaN, -Infinity, 1e-310, 1.7976931348623157e308][i % 29] ?? (rnd() * 1.000001e-3 - 2e6) },
  // Sorted ids make delta encodings meet small and repeated deltas too.
  int64_sorted: { arrow: () => new arrow.Int64(), kind: 'int', big: true, gen: (i) => BigInt(720575940379279360 + i * 3) },
  utf8: { arrow: () => new arrow.Utf8(), kind: 'string', gen: (i) => (i % 3 ? words[rnd() % words.length] : `neuron_${rnd()}`) },
  large_utf8: { arrow: () => new arrow.LargeUtf8(), kind: 'string', gen: (i) => `w${rnd() % 50}_${words[i % words.length]}` },
  dict_utf8: { arrow: () => new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()), kind: 'string', gen: (i) => words[rnd() % words.length] },
};
const NULLS = {
  none: () => false,
  some: (i) => i % 5 === 2 || (i >= 300 && i < 340),
  all: () => true,
};

function makeTable(rows) {
  const vectors = {};
  const expected = {};
  for (const [tname, t] of Object.entries(TYPES)) {
    for (const [nname, isNull] of Object.entries(NULLS)) {
      const col = `${tname}_${nname}`;
      const vals = [];
      for (let i = 0; i < rows; i++) {
        const v = t.gen(i);
        vals.push(isNull(i) ? null : v);
      }
      vectors[col] = arrow.vectorFromArray(vals, t.arrow());
      expected[col] = { kind: t.kind, values: vals.map((v) => jsonValue(v, t.kind)) };
    }
  }
  return { table: new arrow.Table(vectors), expected: { rows, columns: expected } };
}

function jsonValue(v, kind) {
  if (v === null) return null;
  if (kind === 'int') return String(v);
  if (kind === 'double') return Number.isFinite(v) ? v : String(v);
  return v;
}

function toWasm(table) {
  return pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
}

// Encodings per column for each setup (dictionary off unless "dict").
function encodingFor(setup, tname) {
  const E = pw.Encoding;
  const k = TYPES[tname].kind;
  switch (setup) {
    case 'plain': return E.PLAIN;
    case 'delta':
      if (tname === 'bool') return E.RLE;
      if (k === 'int') return E.DELTA_BINARY_PACKED;
      if (k === 'double') return E.BYTE_STREAM_SPLIT;
      return E.DELTA_BYTE_ARRAY;
    case 'delta_length':
      if (k === 'string') return E.DELTA_LENGTH_BYTE_ARRAY;
      if (k === 'int') return E.DELTA_BINARY_PACKED;
      return E.PLAIN;
  }
  return undefined;
}

function props(codec, version, setup, extra = {}) {
  let b = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression[codec])
    .setWriterVersion(pw.WriterVersion[version])
    .setMaxRowGroupSize(extra.rowGroup ?? 256);
  if (extra.pageBytes) b = b.setDataPageSizeLimit(extra.pageBytes);
  if (extra.dictBytes) b = b.setDictionaryPageSizeLimit(extra.dictBytes);
  if (extra.batch) b = b.setWriteBatchSize(extra.batch);
  if (setup === 'dict') return b.setDictionaryEnabled(true).build();
  b = b.setDictionaryEnabled(false);
  for (const tname of Object.keys(TYPES))
    for (const nname of Object.keys(NULLS)) {
      const e = encodingFor(setup, tname);
      if (e !== undefined) b = b.setColumnEncoding(`${tname}_${nname}`, e);
    }
  return b.build();
}

const main = makeTable(1000);
const expected = { tables: { main: main.expected }, fixtures: [] };
const codecs = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];
const versions = ['V1', 'V2'];
const setups = ['dict', 'plain', 'delta', 'delta_length'];
let failures = 0;
for (const codec of codecs)
  for (const version of versions)
    for (const setup of setups) {
      const file = `main_${codec.toLowerCase()}_${version.toLowerCase()}_${setup}.parquet`;
      try {
        const bytes = pw.writeParquet(toWasm(main.table), props(codec, version, setup));
        writeFileSync(join(out, file), bytes);
        expected.fixtures.push({ file, table: 'main', codec: codec.toLowerCase(), version, encoding: setup });
      } catch (e) {
        // A codec or encoding this build of parquet-wasm cannot write is
        // reported, not hidden: the C side counts what was compared.
        console.error(`parquet_fixtures: ${file}: ${e}`);
        failures++;
      }
    }

// Many small pages; the dictionary overflows its page limit and the writer
// falls back to plain pages within the same column chunk.
for (const version of versions) {
  const file = `pages_${version.toLowerCase()}.parquet`;
  const bytes = pw.writeParquet(toWasm(main.table),
    props('SNAPPY', version, 'dict', { rowGroup: 1000, pageBytes: 256, dictBytes: 512, batch: 64 }));
  writeFileSync(join(out, file), bytes);
  expected.fixtures.push({ file, table: 'main', codec: 'snappy', version, encoding: 'dict_fallback_small_pages' });
}

const empty = makeTable(0);
expected.tables.empty = empty.expected;
for (const version of versions) {
  const file = `empty_${version.toLowerCase()}.parquet`;
  writeFileSync(join(out, file), pw.writeParquet(toWasm(empty.table), props('ZSTD', version, 'dict')));
  expected.fixtures.push({ file, table: 'empty', codec: 'zstd', version, encoding: 'dict' });
}

writeFileSync(join(out, 'expected.json'), JSON.stringify(expected));
console.log(`parquet_fixtures: ${expected.fixtures.length} fixtures in ${out}` + (failures ? `, ${failures} not writable` : ''));
process.exit(failures ? 1 : 0);
