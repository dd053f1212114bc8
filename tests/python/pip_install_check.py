"""`pip install .` into a fresh virtualenv with the system's site packages (numpy and pandas from
Debian), with no package index, then the README's one-liner from another directory: the installed
package, not the build tree, answers. The wheel reuses the already built tree (TUNEPROF_BUILD_DIR).

usage: pip_install_check.py PYTHON SOURCE_DIR BUILD_DIR
"""

import os
import pathlib
import subprocess
import sys
import tempfile


def main():
    python, source, build = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        venv = pathlib.Path(tmp) / "venv"
        subprocess.check_call([python, "-m", "venv", "--system-site-packages", str(venv)])
        env = dict(os.environ, TUNEPROF_BUILD_DIR=build, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        env.pop("PYTHONPATH", None)
        subprocess.check_call([str(venv / "bin" / "pip"), "install", "--quiet", source], env=env, cwd=tmp)
        example = pathlib.Path(source) / "examples" / "tiny_train.pt.trace.json.gz"
        code = ("import tuneprof; print(tuneprof.__file__); "
                f"print(tuneprof.load({str(example)!r}).analyze()['dominant_bottleneck'])")
        out = subprocess.run([str(venv / "bin" / "python"), "-c", code], env=env, cwd=tmp, capture_output=True,
                             text=True, check=True).stdout.splitlines()
        assert out[0].startswith(str(venv)), f"imported {out[0]}, not the installed package"
        assert out[1] and out[1] != "None", out
        print(f"pip install . ok: {out[0]}; dominant_bottleneck = {out[1]}")


if __name__ == "__main__":
    main()
