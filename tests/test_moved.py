"""Every import path that moved when the games became packages still imports, as the same module, with a warning."""

from __future__ import annotations

import json
import subprocess
import sys

from epcg._moved import MODULES, PACKAGES, new_name

OLD = [*MODULES, *PACKAGES, *(f"{p}.render" for p in PACKAGES)]


def test_every_old_path_is_the_new_module_with_a_deprecation_warning() -> None:
    code = (f"import importlib, json, warnings\nsame = []\nwith warnings.catch_warnings(record=True) as caught:\n"
            f"    warnings.simplefilter('always')\n"
            f"    for old, new in {[(old, new_name(old)) for old in OLD]!r}:\n"
            f"        same.append(importlib.import_module(old) is importlib.import_module(new))\n"
            f"print(json.dumps([same, [str(w.message) for w in caught if w.category is DeprecationWarning]]))")
    same, warned = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                             check=True).stdout)
    assert all(same)
    assert sorted(warned) == sorted(f"{old} moved to {new_name(old)}; the old path goes in the next release"
                                    for old in [*MODULES, *PACKAGES, *(f"{p}.render" for p in PACKAGES)])
