"""The manual runs as written: README.md and every page of docs/, each page in a scratch
folder of its own, its blocks in the order they appear (a block may use the files an
earlier block of the same page wrote). Every Python block runs in a fresh namespace, and
every `fastrank` command of the bash blocks runs; the setup commands (pip install, pytest,
asv) are CI's. A block that cannot run here (it needs a cluster, say) is marked on the line
just before it with `<!-- no-run: the reason -->`: counted, and refused without a reason.

What a page shows printed is what the code prints. An output block (a fence with no
language, or `text`) that follows a python or bash block with nothing but blank lines
between is that block's standard output: the Python block's prints, or the stdout of the
bash block's `fastrank` commands, one after the other. It is compared as text, exactly,
numbers included; only trailing blanks of each line and blank lines at the end are left
out. The pages print numbers at the precision a reader reads: a Result's 6 decimals, or
`round(x, 6)`. fastrank's values are the same for any thread count, and at 6 decimals on
any machine; the last digits of a full float repr are not (the order of a sum in numpy or
scipy: a 17-digit interval a page showed, written on another machine, differs in its last
digits here at the same commit). Output that depends on the machine (timings, speeds,
paths, thread counts) is marked on the line just before the output block with
`<!-- output varies: what -->`; in that block, and only there, `...` stands for any text
within one line, as doctest's ELLIPSIS does (`train ...s eval ...s`). A difference fails
with a diff that names the page and the line of the output block. A no-run block's output
is compared where the block runs (docs/scale.md's Spark block: tests/test_spark.py)."""

import contextlib
import difflib
import io as stdio
import logging
import re
import shlex
from pathlib import Path
from typing import NamedTuple

import pytest

from fastrank import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
# a marker stands on a line of its own (one quoted in a sentence is not one); its text
# ends at the first -->
NO_RUN = re.compile(r"^<!--\s*no-run:((?:(?!-->).)*)-->", re.S | re.M)
NO_RUN_BEFORE = re.compile(r"(?:\A|\n)<!--\s*no-run:((?:(?!-->).)*)-->[ \t]*\n\Z", re.S)
# an output block: no language, or text; it shows the output of the code block just
# before it when only blank lines (and an output-varies marker) stand between them
OUTPUT_LANGUAGES = ("", "text")
VARIES = re.compile(r"^<!--\s*output varies:((?:(?!-->).)*)-->", re.S | re.M)
VARIES_BEFORE = re.compile(r"\A\s*\n<!--\s*output varies:((?:(?!-->).)*)-->[ \t]*\n\Z", re.S)
ELLIPSIS = "..."
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


class Block(NamedTuple):
    """A fenced block of a page; for a code block, the output block the page shows after
    it (None if none), that block's line and what varies in it (None: nothing)."""
    language: str
    code: str
    line: int
    reason: str | None  # the text of a no-run marker just before the block
    output: str | None = None
    output_line: int | None = None
    varies: str | None = None


def blocks(page):
    """Every fenced block of a page, in order."""
    text = page.read_text()
    found = list(BLOCK.finditer(text))
    out = []
    for i, m in enumerate(found):
        marker = NO_RUN_BEFORE.search(text[:m.start()])
        block = Block(m[1], m[2], text[:m.start()].count("\n") + 1,
                      marker[1].strip() if marker else None)
        after = found[i + 1] if i + 1 < len(found) else None
        if m[1] in ("python", "bash") and after is not None \
                and after[1] in OUTPUT_LANGUAGES:
            between = text[m.end():after.start()]
            varies = VARIES_BEFORE.match(between)
            if varies or not between.strip():
                block = block._replace(output=after[2],
                                       output_line=text[:after.start()].count("\n") + 1,
                                       varies=varies[1].strip() if varies else None)
        out.append(block)
    return out


def lines_of(text):
    """Output as compared: its lines without trailing blanks, no blank lines at the end."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def line_matches(shown, printed, varies):
    """A printed line is the shown one; in a block marked as varying, `...` stands for
    any text within the line."""
    if varies is None or ELLIPSIS not in shown:
        return shown == printed
    pattern = ".*?".join(re.escape(part) for part in shown.split(ELLIPSIS))
    return re.fullmatch(pattern, printed) is not None


def output_difference(shown, printed, varies, where):
    """None if the printed text is what the page shows; else a unified diff of the page's
    output block (at `where`, page:line) against what the code printed."""
    shown_lines, printed_lines = lines_of(shown), lines_of(printed)
    if len(shown_lines) == len(printed_lines) and all(
            line_matches(s, p, varies) for s, p in zip(shown_lines, printed_lines)):
        return None
    # a printed line that the `...` of its shown line covers is written as the page has
    # it, so that the diff holds only the lines that differ
    printed_lines = [shown_lines[i] if i < len(shown_lines)
                     and line_matches(shown_lines[i], line, varies) else line
                     for i, line in enumerate(printed_lines)]
    return "\n".join(difflib.unified_diff(shown_lines, printed_lines, lineterm="",
                                          fromfile=f"{where} (the page)",
                                          tofile="printed"))


def commands(code):
    """The `fastrank ...` commands of a bash block (pip, pytest and asv are CI's)."""
    for command in code.splitlines():
        command = command.split("#")[0].strip()
        if command.startswith("fastrank "):
            yield command


def runnable(page):
    """How many blocks and commands of a page the tests run."""
    return sum(1 if language == "python" else len(list(commands(code)))
               for language, code, _, reason, *_ in blocks(page)
               if reason is None and language in ("python", "bash"))


def test_the_manual_has_code_to_run():
    languages = [block.language for page in PAGES for block in blocks(page)]
    assert languages.count("python") >= 12 and languages.count("bash") >= 8
    for workflow in WORKFLOWS:
        page = ROOT / "docs" / f"{workflow}.md"
        assert runnable(page) >= 1, f"docs/{workflow}.md shows no code that runs"


def test_blocks_that_do_not_run_say_why():
    skipped = []
    for page in PAGES:
        markers = NO_RUN.findall(page.read_text())
        marked = [(line, language, reason) for language, _, line, reason, *_ in blocks(page)
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


def test_output_markers_stand_before_an_output_block():
    """An `output varies` marker belongs to the output block just after it (which follows
    a code block), says what varies, and that block uses `...` for it."""
    for page in PAGES:
        where = page.relative_to(ROOT)
        marked = [b for b in blocks(page) if b.varies is not None]
        assert len(VARIES.findall(page.read_text())) == len(marked), (
            f"{where}: an `<!-- output varies: what -->` marker must stand on the line "
            "just before an output block that follows a python or bash block")
        for block in marked:
            assert len(block.varies.split()) >= 1, f"{where}:{block.output_line}: say what varies"
            assert ELLIPSIS in block.output, (
                f"{where}:{block.output_line}: marked as varying, but no `...` stands for "
                "what varies")


def test_the_output_comparison():
    """The comparison of the tests below: exact text, `...` only where marked, a diff
    naming the page's line."""
    shown = "Result(recsys, 2 of 2 users counted)\n  ndcg@3  0.638166\n"
    assert output_difference(shown, shown + "\n", None, "page.md:9") is None
    assert output_difference(shown, shown.replace("\n", "   \n"), None, "page.md:9") is None
    diff = output_difference(shown, shown.replace("0.638166", "0.638167"), None, "page.md:9")
    assert diff.splitlines()[:2] == ["--- page.md:9 (the page)", "+++ printed"]
    assert "-  ndcg@3  0.638166" in diff and "+  ndcg@3  0.638167" in diff
    assert output_difference(shown, shown + "more\n", None, "page.md:9") is not None
    assert output_difference(shown, "", None, "page.md:9") is not None
    timed = "1 0.1225 train ...s eval ...s\n2 0.1227 train ...s eval ...s\n"
    printed = "1 0.1225 train 0.04s eval 0.32s\n2 0.1227 train 0.02s eval 0.02s\n"
    assert output_difference(timed, printed, "timings", "page.md:9") is None
    # without the marker, `...` is text; with it, it never spans lines nor hides a number
    assert output_difference(timed, printed, None, "page.md:9") is not None
    assert output_difference("a ... b\n", "a x\ny b\n", "timings", "page.md:9") is not None
    diff = output_difference(timed, printed.replace("0.1227", "0.1228"), "timings",
                             "page.md:9")
    assert "-2 0.1227 train ...s eval ...s" in diff and "+2 0.1228 train 0.02s eval 0.02s" in diff
    assert " 1 0.1225 train ...s eval ...s" in diff   # a matching line is not a difference


def test_blocks_pair_with_the_output_shown_after_them(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1)\n```\n\n```\n1\n```\n\nText.\n\n```text\nsig()\n```\n"
                    "```bash\nfastrank --version\n```\n<!-- output varies: the version -->\n"
                    "```\nfastrank ...\n```\n")
    code, _, text, bash, _ = blocks(page)
    assert (code.output, code.output_line, code.varies) == ("1\n", 5, None)
    assert text.language == "text" and text.output is None   # prose stands between
    assert (bash.output, bash.output_line, bash.varies) == ("fastrank ...\n", 18, "the version")
    # a marker quoted in a sentence is not one
    assert VARIES.findall("Mark it `<!-- output varies: x -->`.\n<!-- output varies: y -->\n") \
        == [" y "]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_block_of_the_page_runs(page, tmp_path, monkeypatch):
    """Every block runs, and prints what the page shows after it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    (tmp_path / "docs").mkdir()
    where = page.relative_to(ROOT)
    differences = []
    for block in blocks(page):
        language, code, line = block.language, block.code, block.line
        if block.reason is not None:
            continue
        out = stdio.StringIO()
        if language == "python":
            namespace = {"__name__": "__readme__"}
            with contextlib.redirect_stdout(out):
                try:
                    exec(compile(code, f"{where}:{line}", "exec"), namespace)
                except Exception as exc:  # pragma: no cover - the message says where
                    raise AssertionError(f"{where} line {line}: {exc!r}") from exc
        elif language == "bash":
            for command in commands(code):
                err = stdio.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = cli.main(shlex.split(command)[1:])
                assert status == 0, f"{where} line {line}: {command}: {err.getvalue()}"
        else:
            continue
        if block.output is not None:
            difference = output_difference(block.output, out.getvalue(), block.varies,
                                           f"{where}:{block.output_line}")
            if difference is not None:
                differences.append(difference)
    for path in WRITES.get(name(page), []):
        assert (tmp_path / path).exists(), f"{where} no longer writes {path}"
    if differences:
        pytest.fail(f"{where}: what the page shows printed is not what its code prints:\n"
                    + "\n\n".join(differences), pytrace=False)
