// Write tables in the real formats the importers read, for the generated
// test and bench data (tests/oracles/import_data.py describes them).
//   usage: node write_tables.mjs SPEC.json
// SPEC: [{path, format: "feather" | "arrows" | "parquet", compression?,
//         columns: [{name, type, values? | npy?}]}]
// type: int64, int32, uint64, float64, bool, utf8, dict (Dictionary<Utf8, Int32>);
// numbers come as a JSON list (int64 as decimal strings or numbers; null for
// a null) or, for big columns, as a .npy file of the same dtype (no nulls).
// Feather and Arrow streams are written by apache-arrow, Parquet by
// parquet-wasm (from apache-arrow's IPC stream), ZSTD-compressed by default.
import { readFileSync, writeFileSync } from 'node:fs';
import * as A from 'apache-arrow';

const specs = JSON.parse(readFileSync(process.argv[2], 'utf8'));

function npy(path) {
  const b = readFileSync(path);
  const hlen = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + hlen).toString('latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const data = b.subarray(10 + hlen);
  const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  switch (descr) {
    case '<i8': return new BigInt64Array(buf);
    case '<u8': return new BigUint64Array(buf);
    case '<i4': return new Int32Array(buf);
    case '<f8': return new Float64Array(buf);
    default: throw new Error(`${path}: dtype ${descr} not supported`);
  }
}

const types = {
  int64: () => new A.Int64(),
  int32: () => new A.Int32(),
  uint64: () => new A.Uint64(),
  float64: () => new A.Float64(),
  bool: () => new A.Bool(),
  utf8: () => new A.Utf8(),
  dict: () => new A.Dictionary(new A.Utf8(), new A.Int32()),
};

function column(c) {
  const type = types[c.type]();
  if (c.npy) {
    const data = npy(c.npy);
    return A.makeVector(data); // typed arrays map to their Arrow type without copying
  }
  let values = c.values;
  if (c.type === 'int64' || c.type === 'uint64') values = values.map((v) => (v === null ? null : BigInt(v)));
  return A.vectorFromArray(values, type);
}

for (const spec of specs) {
  const cols = {};
  for (const c of spec.columns) cols[c.name] = column(c);
  const table = new A.Table(cols);
  let bytes;
  if (spec.format === 'feather' || spec.format === 'arrows') {
    bytes = A.tableToIPC(table, spec.format === 'feather' ? 'file' : 'stream');
  } else if (spec.format === 'parquet') {
    const pq = await import('parquet-wasm');
    const wasmTable = pq.Table.fromIPCStream(A.tableToIPC(table, 'stream'));
    const codec = { none: pq.Compression.UNCOMPRESSED, snappy: pq.Compression.SNAPPY, zstd: pq.Compression.ZSTD }[spec.compression || 'zstd'];
    const props = new pq.WriterPropertiesBuilder().setCompression(codec).build();
    bytes = pq.writeParquet(wasmTable, props);
  } else {
    throw new Error(`unknown format ${spec.format}`);
  }
  writeFileSync(spec.path, bytes);
}
