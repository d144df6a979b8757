"""The README runs as written: every Python block, and every `fastrank` command of its bash
blocks, in the order they appear, in one scratch folder (so a block may use the files an
earlier one wrote). The two setup commands (pip install, pytest) and asv are CI's; the
Spark block runs in tests/test_spark.py, which has a SparkSession (and Java)."""

import contextlib
import io as stdio
import os
import re
import shlex
from pathlib import Path

import pytest

from fastrank import cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def blocks():
    """(language, code, line) of every fenced block of the README."""
    text = README.read_text()
    return [(m[1], m[2], text[:m.start()].count("\n") + 1) for m in BLOCK.finditer(text)]


def test_the_readme_has_code_to_run():
    languages = [language for language, _, _ in blocks()]
    assert languages.count("python") >= 8 and languages.count("bash") >= 5


@pytest.mark.filterwarnings("ignore")
def test_every_block_of_the_readme_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    (tmp_path / "docs").mkdir()
    ran = 0
    for language, code, line in blocks():
        if language == "python":
            if "pyspark" in code:
                continue  # run by tests/test_spark.py, in its SparkSession
            namespace = {"__name__": "__readme__"}
            with contextlib.redirect_stdout(stdio.StringIO()):
                try:
                    exec(compile(code, f"README.md:{line}", "exec"), namespace)
                except Exception as exc:  # pragma: no cover - the message says where
                    raise AssertionError(f"README.md line {line}: {exc!r}") from exc
            ran += 1
        elif language == "bash":
            for command in code.splitlines():
                command = command.split("#")[0].strip()
                if not command.startswith("fastrank "):
                    continue  # pip, pytest and asv: the setup CI runs itself
                out, err = stdio.StringIO(), stdio.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = cli.main(shlex.split(command)[1:])
                assert status == 0, f"README.md line {line}: {command}: {err.getvalue()}"
                ran += 1
    assert ran >= 12
    assert os.path.exists("docs/compare.png") and os.path.exists("users.csv")
