// Reads back what BrainlessLab's Parquet writer wrote, with parquet-wasm (the
// Rust `parquet` crate), and compares every value with DIR/ours.json (written
// by `parquet_oracle write DIR`, values as in expected.json,
// except doubles, always text with 17 digits).
//
//   usage: node parquet_readback.mjs DIR
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import pw from 'parquet-wasm/node';

const dir = process.argv[2];
const ours = JSON.parse(readFileSync(join(dir, 'ours.json'), 'utf8'));
let failures = 0;
for (const fx of ours.files) {
  const bytes = readFileSync(join(dir, fx.file));
  let table;
  try {
    table = arrow.tableFromIPC(pw.readParquet(new Uint8Array(bytes)).intoIPCStream());
  } catch (e) {
    console.log(`parquet readback: ${fx.file}: FAILED: parquet-wasm cannot read it: ${e}`);
    failures++;
    continue;
  }
  let equal = 0;
  let bad = null;
  // The footer's key-value metadata arrives as the Arrow schema's metadata.
  for (const [key, value] of Object.entries(fx.metadata || {})) {
    const got = table.schema.metadata.get(key);
    if (got !== value && !bad) bad = `metadata ${key}: ${JSON.stringify(got)} where ${JSON.stringify(value)} was written`;
  }
  for (const [name, col] of Object.entries(fx.columns)) {
    const field = table.schema.fields.find((f) => f.name === name);
    if (field && col.nullable !== undefined && field.nullable !== col.nullable && !bad)
      bad = `column ${name}: nullable ${field.nullable} where ${col.nullable} was written`;
  }
  for (const [name, col] of Object.entries(fx.columns)) {
    const vec = table.getChild(name);
    if (bad) break;
    if (!vec) { bad = `column ${name} missing`; break; }
    if (vec.length !== col.values.length) { bad = `column ${name}: ${vec.length} rows, ${col.values.length} written`; break; }
    for (let r = 0; r < col.values.length && !bad; r++) {
      const want = col.values[r];
      let got = vec.get(r);
      if (want === null || got === null) {
        if (want !== got) bad = `column ${name} row ${r}: ${JSON.stringify(got)} where ${JSON.stringify(want)} was written`;
      } else if (col.kind === 'int') {
        if (BigInt(got) !== BigInt(want)) bad = `column ${name} row ${r}: ${got} where ${want} was written`;
      } else if (col.kind === 'double') {
        if (!(got === Number(want) || (Number.isNaN(got) && want === 'NaN'))) bad = `column ${name} row ${r}: ${got} where ${want} was written`;
      } else if (got !== want) {
        bad = `column ${name} row ${r}: ${JSON.stringify(got)} where ${JSON.stringify(want)} was written`;
      }
      if (!bad) equal++;
    }
    if (bad) break;
  }
  if (bad) {
    console.log(`parquet readback: ${fx.file}: FAILED: ${bad}`);
    failures++;
  } else {
    console.log(`parquet readback: ${fx.file}: ${equal} values equal (parquet-wasm reading bl_parquet_writer)`);
  }
}
process.exit(failures ? 1 : 0);
