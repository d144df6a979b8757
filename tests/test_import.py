"""`import fastrank` loads only itself: numpy, scipy, numba, pandas and the package's own
modules load when a name that needs them is first used (a notebook, a CLI's --help or a
script that only reads fr.__version__ pays nothing for what it does not call)."""

import json
import subprocess
import sys

import fastrank as fr

HEAVY = ("numpy", "scipy", "numba", "pandas", "pyarrow", "polars", "matplotlib", "tqdm",
         "threadpoolctl")


def fresh(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_import_fastrank_loads_none_of_its_dependencies_nor_its_modules():
    loaded = fresh("import sys, json, fastrank; print(json.dumps(sorted(sys.modules)))")
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []
    assert [m for m in loaded if m.startswith("fastrank.")] == ["fastrank._version"]


def test_every_public_name_loads_on_first_use_as_it_was():
    names = fresh("import json, fastrank as fr; print(json.dumps(sorted(dir(fr))))")
    assert names == sorted(fr.__all__)
    for name in fr.__all__:
        assert getattr(fr, name) is not None
    from fastrank import Evaluator, evaluate  # `from fastrank import name` too

    assert evaluate is fr.evaluate and Evaluator is fr.Evaluator
    assert fresh("import json, fastrank as fr; fr.METRICS; import sys; "
                 "print(json.dumps('numba' in sys.modules))") is False


def test_an_unknown_name_is_an_attribute_error():
    try:
        fr.evaluat  # noqa: B018
    except AttributeError as err:
        assert "module 'fastrank' has no attribute 'evaluat'" in str(err)
    else:
        raise AssertionError("fr.evaluat did not raise")


def test_no_public_name_is_shadowed_by_a_module_of_the_same_name():
    """Importing a submodule sets the package's attribute of its name: a module named as a
    public name (evaluate.py beside fr.evaluate) would replace the function with the
    module as soon as anything imports it."""
    from pathlib import Path

    package = Path(fr.__file__).parent
    modules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir()
                                                         if (p / "__init__.py").exists()}
    assert (set(fr.__all__) & modules) == {"io"}  # io is the subpackage itself
    code = ("import json, importlib, fastrank as fr; "
            "[importlib.import_module(f'fastrank.{m}') for m in "
            "('evaluate_topk', 'list_overlap', 'io', 'cli', 'streaming', 'stats')]; "
            "print(json.dumps(sorted(n for n in fr.__all__ if n != 'io' and "
            "type(getattr(fr, n)).__name__ == 'module')))")
    assert fresh(code) == []
