"""Run the README's Python example (its first ```python block) as a user of
an installed brainlesslab would, outside any checkout: the example's relative
paths to the shipped files ("data/...", "plans/...") are resolved against
BASE (a checkout or an installed share/brainlesslab), and it runs in the
current directory, where its records go. Usage: readme_python.py README BASE
"""

import re
import sys
from pathlib import Path

readme, base = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
blocks = re.findall(r"```python(?: runnable)?\n(.*?)```", readme.read_text(), re.S)
if not blocks:
    sys.exit(f"{readme}: no ```python block")
code = re.sub(r'"((?:data|plans)/[^"]*)"', lambda m: repr(str(base / m.group(1))), blocks[0])
import brainlesslab  # noqa: E402  (where it comes from is the caller's check)

print("brainlesslab from", brainlesslab.__file__)
env = {}
exec(compile(code, "README.md python example", "exec"), env)
r, rec = env["r"], env["rec"]
import numpy as np  # noqa: E402

assert np.array_equal(np.asarray(r.counts), np.asarray(rec.counts)), "simulate and run_plan disagree"
print("README example ok:", int(np.asarray(r.counts).sum()), "spikes")
