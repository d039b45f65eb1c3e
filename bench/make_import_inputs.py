"""Generate the inputs of the `import` benchmark: a FlyWire-scale Shiu-style
pair (Completeness_783.csv with 138,639 neurons, Connectivity_783 with
15,091,983 rows) and a MaleCNS-scale flat connectome (166,700 bodies,
24,500,000 weight rows, three Feather files), with the generators of the
importer tests (tests/oracles/import_data.py), written in the real formats by
the npm oracles (cd tests/js && npm ci first). Fake data: same shapes and
column names as the real files, random graphs.

usage: /usr/bin/python3 bench/make_import_inputs.py OUTDIR [--only flywire|malecns]
           [--neurons N --rows M] [--feather-connectivity]
  --only KIND             one of the two sets (`brainlesslab bench` asks for each)
  --neurons N, --rows M   other sizes (the bench's --quick)
  --feather-connectivity  write Connectivity_783 as Feather; default Parquet.
Then time each import (one core; docs/benchmark.md, "import"):
  /usr/bin/time -v build/brainlesslab import flywire --neurons OUTDIR/flywire/Completeness_783.csv \\
      --connectivity OUTDIR/flywire/Connectivity_783.parquet --out /tmp/fw
  /usr/bin/time -v build/brainlesslab import malecns \\
      --annotations OUTDIR/malecns/body-annotations-male-cns-v0.9-minconf-0.5.feather \\
      --transmitters OUTDIR/malecns/body-neurotransmitters-male-cns-v0.9.feather \\
      --weights OUTDIR/malecns/connectome-weights-male-cns-v0.9-minconf-0.5.feather --out /tmp/mcns
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracles"))
import import_data as D  # noqa: E402


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    out = Path(args[0])

    def opt(name, default=None):
        return args[args.index(name) + 1] if name in args else default

    only = opt("--only")
    parquet = "--feather-connectivity" not in args
    rng = np.random.default_rng(783)
    if only in (None, "flywire"):
        t = time.time()
        d = D.make_flywire(out / "flywire", rng, n=int(opt("--neurons", 138_639)), m=int(opt("--rows", 15_091_983)),
                           parquet=parquet, big=True)
        print(f"flywire-scale: {len(d['ids'])} neurons, {len(d['pre'])} rows ({time.time() - t:.0f} s)")
    if only in (None, "malecns"):
        t = time.time()
        d = D.make_malecns(out / "malecns", rng, n=int(opt("--neurons", 166_700)), m=int(opt("--rows", 24_500_000)),
                           big=True)
        print(f"malecns-scale: {len(d['body'])} bodies, {len(d['pre'])} weight rows ({time.time() - t:.0f} s)")
    return 0


sys.exit(main())
