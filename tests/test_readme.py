"""The manual runs as written: README.md and every page of docs/, each page in a scratch
folder of its own, its blocks in the order they appear (a block may use the files an
earlier block of the same page wrote). Every Python block runs in a fresh namespace, and
every `fastrank` command of the bash blocks runs; the setup commands (pip install, pytest,
asv) are CI's. A block that cannot run here (it needs a cluster, say) is marked on the line
just before it with `<!-- no-run: the reason -->`: counted, and refused without a reason."""

import contextlib
import io as stdio
import logging
import re
import shlex
from pathlib import Path

import pytest

from fastrank import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
NO_RUN = re.compile(r"<!--\s*no-run:(.*?)-->")
NO_RUN_BEFORE = re.compile(r"<!--\s*no-run:(.*?)-->[ \t]*\n\Z", re.S)
LIST_ITEM = re.compile(r"^(\d+\.|[-*]) ")
# the pages that show a workflow: each has code that runs
WORKFLOWS = ("getting-started", "implicit", "trec", "tables", "diversity", "compare-systems",
             "scale", "sampled-and-debiased", "ratings", "more-measures")
# files a page's examples write, which its prose shows (the plot) or its commands read
WRITES = {"compare-systems": ["docs/compare.png"], "tables": ["users.csv"]}
# the manual's examples run: raise this only for a block that needs what the tests cannot
# have (a Spark cluster, say), and give the reason in its marker
MAX_NO_RUN = 2


def name(page):
    return page.stem if page.parent.name == "docs" else page.name


def blocks(page):
    """(language, code, line, reason) of every fenced block of a page; reason is the text
    of a no-run marker just before the block, else None."""
    text = page.read_text()
    out = []
    for m in BLOCK.finditer(text):
        marker = NO_RUN_BEFORE.search(text[:m.start()])
        out.append((m[1], m[2], text[:m.start()].count("\n") + 1,
                    marker[1].strip() if marker else None))
    return out


def commands(code):
    """The `fastrank ...` commands of a bash block (pip, pytest and asv are CI's)."""
    for command in code.splitlines():
        command = command.split("#")[0].strip()
        if command.startswith("fastrank "):
            yield command


def runnable(page):
    """How many blocks and commands of a page the tests run."""
    return sum(1 if language == "python" else len(list(commands(code)))
               for language, code, _, reason in blocks(page)
               if reason is None and language in ("python", "bash"))


def test_the_manual_has_code_to_run():
    languages = [language for page in PAGES for language, _, _, _ in blocks(page)]
    assert languages.count("python") >= 12 and languages.count("bash") >= 8
    for workflow in WORKFLOWS:
        page = ROOT / "docs" / f"{workflow}.md"
        assert runnable(page) >= 1, f"docs/{workflow}.md shows no code that runs"


def test_blocks_that_do_not_run_say_why():
    skipped = []
    for page in PAGES:
        markers = NO_RUN.findall(page.read_text())
        marked = [(line, language, reason) for language, _, line, reason in blocks(page)
                  if reason is not None]
        assert len(markers) == len(marked), (
            f"{page.name}: a `<!-- no-run: reason -->` marker must stand on the line just "
            "before the block it marks")
        for line, language, reason in marked:
            assert language in ("python", "bash"), f"{page.name}:{line}: marks a {language} " \
                                                   "block, which never runs anyway"
            assert len(reason.split()) >= 3, f"{page.name}:{line}: say why it cannot run"
            skipped.append(f"{page.name}:{line}")
    assert len(skipped) <= MAX_NO_RUN, f"blocks that do not run: {skipped}"


def test_the_site_reads_the_pages_as_github_does():
    """mkdocs' Markdown (Python-Markdown) wants a blank line before a list and nested lists
    indented by 4 spaces; GitHub takes both without. Written its way, a page reads the same
    on both."""
    wrong = []
    for page in PAGES[1:]:
        lines, fence = page.read_text().splitlines(), False
        for i, line in enumerate(lines):
            if line.startswith("```"):
                fence = not fence
            if fence or not LIST_ITEM.match(line.lstrip(" ")):
                continue
            before = lines[i - 1] if i else ""
            if re.match(r"^ {1,3}(\d+\.|[-*]) ", line):
                wrong.append(f"docs/{page.name}:{i + 1}: indent a nested list by 4 spaces")
            elif not line.startswith(" ") and before.strip() and not before.startswith(" ") \
                    and not LIST_ITEM.match(before):
                wrong.append(f"docs/{page.name}:{i + 1}: leave a blank line before the list")
    assert not wrong, "\n".join(wrong)


def test_ci_builds_the_docs_as_a_user_does():
    """CI's docs build fails on a warning, as a user's `mkdocs build --strict` does:
    `--quiet` drops the warnings before strict mode counts them, and the build passes."""
    # the script's lines without their comments and quoted text
    code = [re.sub(r"'[^']*'|\"[^\"]*\"", "''", line).split("#")[0].split()
            for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    builds = [words for words in code if "mkdocs" in words and "build" in words]
    assert builds, ".ci/run no longer builds the docs site"
    for words in builds:
        assert "--strict" in words and not {"-q", "--quiet"} & set(words), words


def test_every_docstring_reads_as_numpy_style():
    """The API reference reads the docstrings in numpy style (mkdocs.yml), and the build
    stops on what griffe warns about, e.g. a paragraph inside Parameters read as
    parameters named by its words. Every docstring of the package is checked, shown on the
    site or not; and every item of an Attributes section is a name with a description
    (griffe takes free text there for attributes, without a word)."""
    griffe = pytest.importorskip("griffe", reason="the docs extra: pip install '.[docs]'")
    warned = []

    class Collect(logging.Handler):
        def emit(self, record):
            warned.append(record.getMessage())

    handler = Collect(logging.WARNING)
    package = griffe.load("fastrank", search_paths=[str(ROOT)], docstring_parser="numpy")
    logger = logging.getLogger("griffe")
    logger.addHandler(handler)
    wrong, seen = [], set()
    try:
        pending = [package]
        while pending:
            obj = pending.pop()
            if obj.is_alias or obj.path in seen:
                continue
            seen.add(obj.path)
            pending.extend(obj.members.values())
            if obj.docstring is None:
                continue
            for section in obj.docstring.parse("numpy"):
                if section.kind.value != "attributes":
                    continue
                wrong += [f"{obj.path}: attribute {item.name!r} has no description (free "
                          "text in Attributes? move it to Notes)"
                          for item in section.value if not item.description.strip()
                          or not re.fullmatch(r"\w+(, \w+)*", item.name)]
    finally:
        logger.removeHandler(handler)
    assert len(seen) > 500  # the whole package was read
    assert not warned + wrong, "\n".join(warned + wrong)


def test_the_api_reference_shows_the_result_docstring():
    """fastrank.Result takes its docstring from Evaluation at run time (`__doc__ =`), which
    griffe does not run: docs/griffe_extensions.py gives it to the reference."""
    griffe = pytest.importorskip("griffe", reason="the docs extra: pip install '.[docs]'")
    extension = griffe.load_extensions(
        f"{ROOT / 'docs' / 'griffe_extensions.py'}:DocstringOfOtherClass")
    package = griffe.load("fastrank", search_paths=[str(ROOT)], docstring_parser="numpy",
                          extensions=extension)
    shown = package["result.Result"].docstring
    assert shown is not None and shown.value == package["evaluation.Evaluation"].docstring.value
    assert "Attributes" in shown.value


@pytest.mark.filterwarnings("ignore")
@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_block_of_the_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    (tmp_path / "docs").mkdir()
    where = page.relative_to(ROOT)
    for language, code, line, reason in blocks(page):
        if reason is not None:
            continue
        if language == "python":
            namespace = {"__name__": "__readme__"}
            with contextlib.redirect_stdout(stdio.StringIO()):
                try:
                    exec(compile(code, f"{where}:{line}", "exec"), namespace)
                except Exception as exc:  # pragma: no cover - the message says where
                    raise AssertionError(f"{where} line {line}: {exc!r}") from exc
        elif language == "bash":
            for command in commands(code):
                out, err = stdio.StringIO(), stdio.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = cli.main(shlex.split(command)[1:])
                assert status == 0, f"{where} line {line}: {command}: {err.getvalue()}"
    for path in WRITES.get(name(page), []):
        assert (tmp_path / path).exists(), f"{where} no longer writes {path}"
