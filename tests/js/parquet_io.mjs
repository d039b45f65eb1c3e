// The Python package's Parquet oracle: parquet-wasm (the Rust reference
// implementation's reader/writer) + apache-arrow, independent of our C code.
//   node parquet_io.mjs read FILE.parquet
//       prints {"rows": n, "columns": {name: {"type": arrow type, "nullable", "values": [...]}},
//               "metadata": {key: value}} (the footer's key-value metadata)
//       (64-bit integers as decimal strings, so nothing is rounded)
//   node parquet_io.mjs write SPEC.json OUT.parquet
//       SPEC: {"columns": [{"name", "type": "int64"|"int32"|"float64"|"utf8"|"bool", "values"}]}
//       (int64 values as decimal strings or numbers)
import { readFileSync, writeFileSync } from 'node:fs';
import * as A from 'apache-arrow';
import * as pq from 'parquet-wasm/node';

const [mode, a, b] = process.argv.slice(2);

function plain(v) {
  if (typeof v === 'bigint') return v.toString();
  return v;
}

if (mode === 'read' && a) {
  const table = A.tableFromIPC(pq.readParquet(new Uint8Array(readFileSync(a))).intoIPCStream());
  const columns = {};
  for (const f of table.schema.fields) {
    const col = table.getChild(f.name);
    const values = [];
    for (let i = 0; i < table.numRows; i++) values.push(plain(col.get(i)));
    columns[f.name] = { type: String(f.type), nullable: f.nullable, values };
  }
  const metadata = Object.fromEntries(table.schema.metadata);
  process.stdout.write(JSON.stringify({ rows: table.numRows, columns, metadata }));
} else if (mode === 'write' && a && b) {
  const spec = JSON.parse(readFileSync(a, 'utf8'));
  const types = {
    int64: () => new A.Int64(), int32: () => new A.Int32(), float64: () => new A.Float64(),
    utf8: () => new A.Utf8(), bool: () => new A.Bool(),
  };
  const vectors = {};
  for (const c of spec.columns) {
    const values = c.type === 'int64' ? c.values.map((v) => BigInt(v)) : c.values;
    vectors[c.name] = A.vectorFromArray(values, types[c.type]());
  }
  const table = new A.Table(vectors);
  const wasmTable = pq.Table.fromIPCStream(A.tableToIPC(table, 'stream'));
  const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.SNAPPY).build();
  writeFileSync(b, pq.writeParquet(wasmTable, props));
} else {
  console.error('usage: node parquet_io.mjs read FILE | write SPEC.json OUT.parquet');
  process.exit(2);
}
