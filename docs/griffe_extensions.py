"""Griffe extensions of the API reference (mkdocs.yml, mkdocstrings' `extensions:`).

Griffe reads the source without running it, so a class whose docstring is set by
`__doc__ = Base.__doc__` (fastrank.Result shares fastrank.evaluation.Evaluation's) would
show no description and no attributes: this copies the named class's docstring."""

import griffe


class DocstringOfOtherClass(griffe.Extension):
    """A class body's `__doc__ = Other.__doc__` gives the class Other's docstring."""

    def on_package(self, *, pkg, **kwargs):
        for cls in classes(pkg):
            assigned = cls.members.get("__doc__")
            if cls.docstring is not None or assigned is None or assigned.is_alias:
                continue
            value = str(assigned.value)
            if not value.endswith(".__doc__"):
                continue
            source = cls.parent.get_member(value.removesuffix(".__doc__"))
            source = source.final_target if source.is_alias else source
            if source.docstring is not None:
                cls.docstring = griffe.Docstring(source.docstring.value, parent=cls,
                                                 parser=source.docstring.parser,
                                                 parser_options=source.docstring.parser_options)


def classes(obj):
    """Every class defined in a module or class, recursively (aliases left out)."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_class:
            yield member
        if member.is_module or member.is_class:
            yield from classes(member)
