"""The extension module brainlesslab._core for pip install . (pyproject.toml).

It is built by the project's own CMake (the flags that make results exact,
-ffp-contract=off and no fast-math, live there and nowhere else), with the
tests off and the library linked statically into the extension, so that the
wheel needs nothing beside it but the system libraries the library uses.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                        "-DBL_TESTS=OFF", "-DBL_PYTHON_STATIC=ON", f"-DPython3_EXECUTABLE={sys.executable}"],
                       check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(min(os.cpu_count() or 1, 8))
        subprocess.run(["cmake", "--build", str(build), "--target", "bl_python_core", "-j", jobs], check=True)
        built = sorted((build / "python" / "brainlesslab").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"CMake built no extension module in {build}/python/brainlesslab")
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], dest)


setup(
    ext_modules=[Extension("brainlesslab._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/: that is where the CMake build of a checkout usually lives.
    options={"build": {"build_base": "build-pip"}},
)
