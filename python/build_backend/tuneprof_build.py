"""A PEP 517 build backend for `pip install .` that builds the extension with the project's CMake and
packs python/tuneprof with it into a wheel. Standard library only, so pip needs no index to run it.

TUNEPROF_BUILD_DIR names a configured build tree to reuse (the tests pass build/release, whose module
is already built); otherwise the tree is build/wheel-<python>, configured for the interpreter running pip.
"""

import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import sysconfig
import zipfile

NAME = "tuneprof"
VERSION = "0.1.0"
SOURCE = pathlib.Path(__file__).resolve().parents[2]


def _tag():
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{python}-{platform}"


def _build_tree():
    reuse = os.environ.get("TUNEPROF_BUILD_DIR")
    if reuse:
        tree = pathlib.Path(reuse).resolve()
        if not (tree / "CMakeCache.txt").exists():
            raise RuntimeError(f"TUNEPROF_BUILD_DIR={reuse} is not a configured build tree")
        return tree
    tree = SOURCE / "build" / f"wheel-{sys.implementation.cache_tag}"
    subprocess.check_call(["cmake", "-S", str(SOURCE), "-B", str(tree), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                           "-DTUNEPROF_BUILD_TESTS=OFF", "-DTUNEPROF_BUILD_BENCHMARKS=OFF",
                           f"-DPython_EXECUTABLE={sys.executable}"])
    return tree


def _files():
    tree = _build_tree()
    subprocess.check_call(["cmake", "--build", str(tree), "--target", "tuneprof_python", "-j", str(os.cpu_count() or 1)])
    package = tree / "python" / NAME
    extensions = list(package.glob("_core*.so"))
    if not extensions:
        raise RuntimeError(f"{tree}: the build made no extension module (are python3-dev and pybind11-dev installed?)")
    files = {f"{NAME}/{p.name}": p.read_bytes() for p in extensions}
    for source in sorted((SOURCE / "python" / NAME).glob("*.py")):
        files[f"{NAME}/{source.name}"] = source.read_bytes()
    return files


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: Performance analysis of AI workload profiles, from Python\n"
            "Requires-Python: >=3.9\nRequires-Dist: numpy\nRequires-Dist: pandas\n").encode()


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = pathlib.Path(metadata_directory) / f"{NAME}-{VERSION}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_bytes(_metadata())
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _files()
    info = f"{NAME}-{VERSION}.dist-info"
    files[f"{info}/METADATA"] = _metadata()
    files[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: tuneprof_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n".encode()
    record = [_record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = f"{NAME}-{VERSION}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel
