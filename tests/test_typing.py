"""fastrank is typed: `mypy --strict` (the [tool.mypy] config of pyproject.toml: the numba
kernels excluded) is clean on the package and on a user's script that calls the public API
(tests/typing/user_script.py), and that script runs."""

import importlib.util
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
USER_SCRIPT = ROOT / "tests" / "typing" / "user_script.py"


def test_mypy_strict_is_clean_on_the_package_and_a_user_script(tmp_path):
    api = pytest.importorskip("mypy.api")
    start = time.perf_counter()
    # in-process: the Python running the tests (and its site-packages) is mypy's
    stdout, stderr, status = api.run([
        "--strict", "--config-file", str(ROOT / "pyproject.toml"),
        "--cache-dir", str(tmp_path / "mypy-cache"), "--no-error-summary",
        str(ROOT / "fastrank"), str(USER_SCRIPT)])
    seconds = time.perf_counter() - start
    assert status == 0 and not stdout.strip(), (
        f"mypy --strict found errors ({seconds:.1f} s):\n{stdout}\n{stderr}")
    print(f"mypy --strict: clean in {seconds:.1f} s")


def test_the_user_script_runs(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("fastrank_user_script", USER_SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(tmp_path) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["arrays", "implicit", "files"]
    assert "ndcg_cut_10" in lines[2] and "precision" in lines[1]


def test_py_typed_is_shipped():
    """PEP 561: the marker sits in the package and setuptools installs it."""
    assert (ROOT / "fastrank" / "py.typed").is_file()
    config = (ROOT / "pyproject.toml").read_text()
    package_data = config.split("[tool.setuptools.package-data]")[1].split("\n[")[0]
    assert 'fastrank = ["py.typed"]' in package_data
