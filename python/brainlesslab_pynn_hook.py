"""Makes `import pyNN.brainlesslab` (and PyNN's get_simulator("brainlesslab"))
find brainlesslab.pynn without writing into Debian's pyNN package: a finder
on sys.meta_path that answers for that one name only and imports nothing
until it is asked. It is a top-level module (not inside brainlesslab, whose
import loads NumPy and the extension) because the installed
brainlesslab-pynn.pth imports it at every interpreter start;
`import brainlesslab_pynn_hook` does the same by hand (docs/pynn.md)."""

import importlib
import importlib.abc
import importlib.util
import sys

NAME = "pyNN.brainlesslab"


class _Loader(importlib.abc.Loader):

    def create_module(self, spec):
        return importlib.import_module("brainlesslab.pynn")

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):

    def find_spec(self, fullname, path=None, target=None):
        if fullname != NAME:
            return None
        return importlib.util.spec_from_loader(NAME, _Loader())


def install():
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


install()
