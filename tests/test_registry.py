"""The registry is the one table everything reads: every registered metric has a plain-Python
reference, oracles, a row in the docs' metric table and an entry in the docs' metric
reference, is accepted by fr.evaluate (or sends the user to the function that computes it),
and the package's import graph has one direction."""

import ast
import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import fastrank as fr
from fastrank import dialects, registry

from . import (reference, reference_aspects, reference_beyond, reference_debiased,
               reference_recs)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fastrank"
METRICS_PAGE = (ROOT / "docs" / "metrics.md").read_text()
DIALECTS_PAGE = (ROOT / "docs" / "dialects.md").read_text()


def docs_hooks():
    """docs/hooks.py, the mkdocs hooks that render the metric reference."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

# where the plain-Python reference of each engine's metrics lives
REFERENCES = {
    "ranking": lambda name: name in reference.NAMES,
    "trec": lambda name: name in reference.NAMES,
    "beyond": lambda name: hasattr(reference_beyond, name),
    "aspects": lambda name: hasattr(reference_aspects, {"ab_ndcg": "ab_ndcg_reference",
                                                        "alpha_ndcg": "alpha_dcg_reference"}
                                    .get(name, name)),
    "intents": lambda name: hasattr(reference_aspects, name),
    "ratings": lambda name: name in ("rmse", "mae"),  # tests/test_ratings.py: errors by hand
    "debiased": lambda name: name in reference_debiased.NAMES,
    **{engine: lambda name: name in reference_recs.NAMES
       for engine in ("factors", "auc", "calibration", "overlap")},
}


@pytest.mark.parametrize("name", fr.METRICS.names())
def test_every_registered_metric_has_a_plain_python_reference(name):
    metric = fr.METRICS[name]
    assert REFERENCES[metric.engine](name), (
        f"{name} is registered but tests/reference*.py has no formula for it")


@pytest.mark.parametrize("name", fr.METRICS.names())
def test_every_registered_metric_has_its_docs_row(name):
    assert f"| `{name}" in METRICS_PAGE, f"docs/metrics.md's metric table has no row for {name}"


def test_the_docs_tables_are_the_registrys():
    assert registry.markdown() in METRICS_PAGE, (
        "docs/metrics.md's metric table differs from the registry: paste `fastrank metrics "
        "--markdown` between its markers")
    assert dialects.markdown() in DIALECTS_PAGE, (
        "docs/dialects.md's table differs from fastrank.dialects: paste `fastrank metrics "
        "--dialects --markdown` between its markers")
    for page in ("README.md", "docs/index.md"):
        assert f"{len(fr.METRICS)} metrics" in (ROOT / page).read_text(), (
            f"{page} gives another count of metrics than the registry's {len(fr.METRICS)}")


def test_the_docs_metric_reference_renders_every_metric_its_names_and_oracles():
    hooks = docs_hooks()
    assert hooks.MARKER in METRICS_PAGE
    reference = hooks.metric_reference()
    sections = reference.split("\n### ")
    assert len(sections) == len(fr.METRICS)
    for section, metric in zip(sections, fr.METRICS.values()):
        assert section.removeprefix("### ").startswith(f"{metric.name}\n"), metric.name
        for tool, label, _ in dialects.names_of(metric.name):
            assert f"{tool} `{label}`" in section, (metric.name, label)
        for entry in metric.oracle:
            assert f"`{entry.split(': ')[1]}`" in section, (metric.name, entry)
        assert hooks.escape(metric.source) in section


@pytest.mark.parametrize("name", fr.METRICS.names())
def test_every_registered_metric_names_the_oracles_its_tests_compare_it_with(name):
    """`oracle` says "tool: test file": the file exists and uses the tool, and a file other
    than the table-driven ones (every metric of the registry, every name of a dialect)
    names the metric."""
    oracle = fr.METRICS[name].oracle
    assert oracle and oracle[0].startswith("reference: "), f"{name}: no reference oracle"
    for entry in oracle:
        tool, path = entry.split(": ")
        assert tool in registry.ORACLE_TOOLS, f"{name}: unknown oracle tool {tool!r}"
        text = (ROOT / path).read_text().lower()
        assert tool in text, f"{name}: {path} does not use {tool}"
        if path not in ("tests/test_reference.py", "tests/test_dialects.py"):
            assert name in text, f"{name}: {path} never names it"


def test_every_name_of_a_tool_is_compared_with_that_tool():
    """tests/test_dialects.py (and tests/test_intents.py for the diversity names) compare
    every name a dialect maps with its tool: the metric's oracle says so."""
    for dialect, label, meaning in dialects.written_names():
        tools = [entry.split(": ")[0] for entry in fr.METRICS[meaning.metric].oracle]
        assert dialect in tools, f"{dialect}'s {label} maps to {meaning.metric}, whose " \
                                 f"oracle does not name {dialect}"


def test_the_registry_is_read_only_and_browsable():
    with pytest.raises(TypeError):
        fr.METRICS["x"] = fr.METRICS["ndcg"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fr.METRICS["ndcg"].formula = "x"
    with pytest.raises(TypeError):
        fr.METRICS["ndcg"].codes["recsys"] = 0
    frame = fr.METRICS.to_frame()
    assert list(frame.index) == list(fr.METRICS) and "formula" in frame.columns
    assert set(fr.METRIC_NAMES) <= set(fr.METRICS)
    for metric in fr.METRICS.values():
        assert metric.family in registry.FAMILIES and metric.engine in registry.ENGINES
        assert metric.aggregate in registry.AGGREGATES and metric.formula and metric.source
        assert frame.loc[metric.name, "oracle"] == "; ".join(metric.oracle)
        if metric.engine in ("ranking", "trec"):
            assert set(metric.codes) == set(fr.CONVENTIONS), metric.name


@pytest.mark.parametrize("name", fr.METRICS.names())
def test_every_registered_metric_is_accepted_by_evaluate(name):
    rng = np.random.default_rng(0)
    truth = sp.csr_array((rng.random((30, 20)) < 0.3) * rng.integers(1, 4, (30, 20)))
    topk = np.argsort(rng.random((30, 20)), axis=1)[:, :5]
    metric = fr.METRICS[name]
    label = name + "".join(f"({p.name}=0.5)" for p in metric.params
                           if p.default is None and p.name != "rel")
    side = dict(train=truth, item_aspects=sp.csr_array((rng.random((20, 4)) < 0.5) * 1),
                baseline="popular")
    if metric.entry != "fr.evaluate":
        with pytest.raises(ValueError, match=f"computed by {metric.entry}"):
            fr.evaluate(truth, topk, [label], **side)
        return
    res = fr.evaluate(truth, topk, [label], **side)
    assert np.isfinite(res[label]) and res.aggregates[label] == metric.aggregate or \
        res.aggregates[label] == "pooled"
    assert res.canonical(label) == label and res.requests[label].metric is metric
    assert (label in res.catalogue) == (not metric.per_user)


# -- the import graph ---------------------------------------------------------------------

def modules():
    """{module name: parsed file} of every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = (path, ast.parse(path.read_text()))
    return out


def imported(module, node, is_package):
    """The package modules an import statement of `module` names."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if isinstance(node, ast.ImportFrom):
        if node.level == 0:
            if not (node.module or "").startswith("fastrank"):
                return []
            target = node.module.split(".")
        else:
            up = base[:len(base) - node.level + 1]
            target = up + (node.module.split(".") if node.module else [])
        names = [".".join(target)] if node.module else []  # `from . import x`: x only
        names += [".".join(target + [alias.name]) for alias in node.names]
        return names
    return [alias.name for alias in node.names if alias.name.startswith("fastrank")]


def _is_type_checking(node):
    """Is a top-level statement an `if TYPE_CHECKING:` block?"""
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
        and node.test.id == "TYPE_CHECKING"


def test_no_import_cycle_and_no_hidden_imports():
    """Top-level imports between package modules form a graph without a cycle, and no
    function imports a package module, except kernels (numba loads them on first use).
    Imports under `if TYPE_CHECKING:` never run: they are for type checkers only."""
    found = modules()
    graph = {name: set() for name in found}
    hidden = []
    for name, (path, tree) in found.items():
        is_package = path.name == "__init__.py"
        top = set(id(node) for node in tree.body)
        typing_only = set(id(inner) for node in tree.body if _is_type_checking(node)
                          for inner in ast.walk(node))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in typing_only:
                continue
            targets = [t for t in imported(name, node, is_package) if t in found]
            if id(node) in top:
                graph[name].update(t for t in targets if t != name)
            elif any(not t.startswith("fastrank._kernels") for t in targets):
                hidden.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not hidden, f"imports of package modules inside functions: {hidden}"
    # no cycle: a depth-first search that never meets a module on its own stack
    state = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
