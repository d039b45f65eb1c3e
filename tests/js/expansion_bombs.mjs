// Arrow files that expand far beyond their size (issue 26, finding 2), written
// by apache-arrow (JS): each must be refused by the reader's expansion bound
// (BL_TABLE_EXPANSION decoded bytes per file byte, table.h) before the memory
// is allocated, where the unbounded reader decoded them whole.
//   usage: node expansion_bombs.mjs OUTDIR
//   dict-bomb.feather   one 20 KB dictionary string, 10,000 indices to it:
//                       ~80 KB of file decode to 200 MB of strings
//   zstd-bomb.arrows    2^24 zero int64 values in a ZSTD body (needs `zstd`):
//                       a few KB of file decode to 128 MiB
//   fine.feather        the same shapes at a legitimate size (read fine)
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as A from 'apache-arrow';

const out = process.argv[2];
mkdirSync(out, { recursive: true });

function dictTable(strLen, n) {
  const s = 'x'.repeat(strLen);
  const v = A.vectorFromArray(Array.from({ length: n }, () => s), new A.Dictionary(new A.Utf8(), new A.Int32()));
  return new A.Table({ nt: v });
}
writeFileSync(join(out, 'dict-bomb.feather'), A.tableToIPC(dictTable(20000, 10000), 'file'));
writeFileSync(join(out, 'fine.feather'), A.tableToIPC(dictTable(20, 1000), 'file'));

// The uncompressed-length prefix fixed as in arrow_fixtures.mjs (apache-arrow
// 21.2.0 writes the compressed length there).
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
let zstd = true;
try {
  execFileSync('zstd', ['--version'], { stdio: 'ignore' });
} catch {
  zstd = false;
}
if (zstd) {
  A.compressionRegistry.set(A.CompressionType.ZSTD, {
    encode: (d) => new Uint8Array(execFileSync('zstd', ['-q', '-c', '-19'], { input: d, maxBuffer: 1 << 30 })),
  });
  const zeros = new A.Table({ x: A.makeVector(new BigInt64Array(1 << 24)) });
  writeFileSync(join(out, 'zstd-bomb.arrows'), A.tableToIPC(zeros, 'stream', A.CompressionType.ZSTD));
}
console.log(`expansion bombs in ${out}${zstd ? '' : ' (no zstd tool: zstd-bomb left out)'}`);
