"""Finding and running the `tuneprof` command from Python, standard library only.

The capture helpers run inside training environments, where the compiled module may not be built for the
interpreter: they hand the traces to the command instead, found in this order: $TUNEPROF_BIN, the build
tree the package sits in (build/release/python/tuneprof beside build/release/tuneprof), the source tree's
release build, then PATH.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
from typing import Optional

_PACKAGE = pathlib.Path(__file__).resolve().parent


def _runnable(path: pathlib.Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_cli() -> Optional[str]:
    """The tuneprof executable's path, or None where there is none."""
    named = os.environ.get("TUNEPROF_BIN")
    if named:
        return named if _runnable(pathlib.Path(named)) else None
    for candidate in (_PACKAGE.parent.parent / "tuneprof", _PACKAGE.parent.parent / "build" / "release" / "tuneprof"):
        if _runnable(candidate):
            return str(candidate)
    return shutil.which("tuneprof")


def missing_cli_line(what: str) -> str:
    """The one line said, once, where no tuneprof command is found: what was not done and how to fix it."""
    named = os.environ.get("TUNEPROF_BIN")
    where = f"TUNEPROF_BIN={named} is not an executable" if named else "no tuneprof command found"
    return (f"tuneprof: capture: {where} (build it with `make build`, or set TUNEPROF_BIN / PATH); "
            f"{what} not done, the traces are kept")


def child_environment() -> dict:
    """The environment of a tuneprof child process. The launcher's MPI variables are left out: the command
    reads them as "this process is one of an MPI job", which the child of one training rank is not."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI_", "PMIX_"))}


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
