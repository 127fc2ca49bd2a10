"""Print the Python interpreter `make` builds .venv from: the first Python 3.11+ on this
machine that was built for speed, else the first Python 3.11+ at all (3.11 first: the
version the pinned requirements are tested on).

Why it matters: the read path is about half Python. A CPython compiled without profile-
guided and link-time optimisation, and linked to a shared libpython (pyenv's default
build, this machine's `python3`), ran it 7 % slower than Debian's /usr/bin/python3.11
(statically linked, PGO + LTO): read path p50 15.0-16.4 against 14.4-14.7 ms, three
alternating runs of the business questions, same store. Nothing else changes: same
version line, same wheels.

Run by whatever `python3` is first on PATH (any version: it only starts the others).
`PY=/path/to/python make …` skips it. Prints one path; says why on stderr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# The version requirements.txt is pinned and tested on first, then newer ones (whose
# wheels for the pinned packages may be missing), then whatever `python3` is.
NAMES = ("python3.11", "python3.12", "python3.13", "python3.14", "python3")
PLACES = ("/usr/bin", "/usr/local/bin")

# Run inside each candidate: its version, whether it can make a venv, and whether it was
# built for speed (PGO/LTO asked for at configure time, or a libpython linked in
# statically, as distributions build their /usr/bin/python3: their configure line is the
# shared library's and does not show their optimisation flags).
PROBE = r"""
import sys, sysconfig
ok_venv = True
try:
    import venv, ensurepip
except ImportError:
    ok_venv = False
args = sysconfig.get_config_var("CONFIG_ARGS") or ""
pgo = "--enable-optimizations" in args or "--with-lto" in args
try:
    with open("/proc/self/maps") as fh:
        static = not any("libpython" in line for line in fh)
except OSError:
    static = False
print(sys.version_info >= (3, 11), ok_venv, pgo or static)
"""


def candidates() -> list[str]:
    seen: dict[str, str] = {}
    for name in NAMES:
        for found in (shutil.which(name), *(os.path.join(p, name) for p in PLACES)):
            if found and os.access(found, os.X_OK):
                seen.setdefault(os.path.realpath(found), found)
    return list(seen.values())


def probe(path: str) -> tuple[bool, bool, bool] | None:
    try:
        out = subprocess.run([path, "-I", "-c", PROBE], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    parts = out.stdout.split()
    if out.returncode != 0 or len(parts) != 3:
        return None
    recent, can_venv, fast = (p == "True" for p in parts)
    return recent, can_venv, fast


def pick() -> tuple[str | None, str]:
    usable: list[tuple[str, bool]] = []
    for path in candidates():
        found = probe(path)
        if found and found[0] and found[1]:
            usable.append((path, found[2]))
    for path, fast in usable:
        if fast:
            return path, "built with PGO/LTO or a static libpython"
    if usable:
        return usable[0][0], "no optimised build found; the read path's Python runs slower on a plain one"
    return None, "no Python 3.11+ with the venv module found (Debian: apt-get install python3-venv)"


def main() -> int:
    path, why = pick()
    if path is None:
        print(f"pick_python: {why}", file=sys.stderr)
        return 1
    print(f"pick_python: {path} ({why})", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
