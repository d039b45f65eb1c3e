# The Debian package: `cpack -G DEB` in a build directory (or `cmake --build
# build --target package`) gives brainlesslab_<version>_amd64.deb holding
# what `cmake --install` installs, under /usr: the CLI, libbrainlesslab.so
# and .a, the headers, the pkg-config file, the man page, the Python
# package in /usr/lib/python3/dist-packages, and /usr/share/brainlesslab
# (plans, data, examples, docs: CMakeLists.txt's install rules). tests/cli/test_deb_package.sh
# builds it, unpacks it into a fresh directory and runs it from there.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME brainlesslab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "exact, fast, reproducible simulation of spiking networks on connectomes")
set(CPACK_PACKAGE_DESCRIPTION
    "BrainlessLab runs leaky integrate-and-fire models on whole-brain connectomes (Shiu et al. 2024's\n model, bit-identical across backends) from plans into sealed, verifiable records. This package\n holds the brainlesslab command, the C library (shared and static) with its headers and\n pkg-config file, the Python package brainlesslab (extension module, figures, Shiu workflow),\n and in /usr/share/brainlesslab the plans, the larva and C. elegans data, examples and docs.")
set(CPACK_PACKAGE_CONTACT "BrainlessLab maintainers <maintainers@brainlesslab.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)          # brainlesslab_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Library dependencies come from dpkg-shlibdeps over the binaries; the
# package's own library directory is searched for libbrainlesslab.so.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR})
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.11), python3-numpy")
# pandas: Shiu et al.'s load_exps and get_rate return DataFrames, as upstream's do.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-matplotlib, python3-h5py, python3-pandas")
# pyNN.brainlesslab (docs/pynn.md) runs PyNN scripts: PyNN and Neo come with python3-pynn.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-pynn")
# The package is built from the build tree as it is; nothing is stripped, so
# the records' build identity stays true to the binaries.
include(CPack)
