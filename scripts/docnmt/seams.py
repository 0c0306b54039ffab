"""The stages' registries that the top-level helpers read, declared in one table: the config's checks and schema
(:mod:`docnmt.config`), the manual (:mod:`docnmt.manual`) and the setup hint (:mod:`docnmt.installation`) name an
entry here and never import a stage themselves.

As lm-evaluation-harness's lazy ``module:object`` entries, each entry names the module and the object; the module
is imported on first use (:func:`lookup`), so importing a top-level helper imports no stage, and the arrows of the
package's imports run one way: the stages read the top-level helpers, and the helpers reach a stage only through
this table (``tests/test_structure.py`` reads it and fails on any other arrow that runs up).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery

#: Entry -> ``module:object``: what the top-level helpers read of the stages.
SEAMS = {
    # the backend layer (docnmt.decode.backend, docnmt.decode.load_options)
    "backends": "docnmt.decode.backend:REGISTRY",
    "backend": "docnmt.decode.backend:backend",
    "backend_names": "docnmt.decode.backend:names",
    "default_backend": "docnmt.decode.backend:DEFAULT",
    "required_load_options": "docnmt.decode.load_options:required",
    "load_option_schema": "docnmt.decode.load_options:schema_properties",
    # the strategy registry (docnmt.decode.strategy_registry, filled by docnmt.decode.strategies)
    "decode_rules": "docnmt.decode.strategies:decode_rules",
    # the variant registry (docnmt.decode.variants: +mbr, +qe, pooled+docmbr)
    "variant_problem": "docnmt.decode.variants:config_problem",
    # the metric layer (docnmt.score.metric)
    "metrics": "docnmt.score.metric:metrics",
    "config_metric_modules": "docnmt.score.metric:config_modules",
    # the download sources' declarations (docnmt.corpora.sources)
    "source_problem": "docnmt.corpora.sources:source_problem",
}


#: The modules that moved, by their old names, for one release (0.2 drops them): a researcher's own backend or
#: metric imports ``docnmt.interface`` or ``docnmt.metrics`` as the manual of 0.1 showed. Importing an old name
#: gives the module under its new name, with a DeprecationWarning that says it.
MOVED = {
    "docnmt.interface": "docnmt.decode.backend",
    "docnmt.search": "docnmt.decode.requests",
    "docnmt.load_options": "docnmt.decode.load_options",
    "docnmt.metrics": "docnmt.score.metric",
    "docnmt.environment": "docnmt.installation",
}


class MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a module of :data:`MOVED` by its old name: the module under its new name, the same object (one
    registry), and a DeprecationWarning naming both."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        import warnings

        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} is now {new}; the old name goes in docnmt 0.2", DeprecationWarning, stacklevel=3)
        return importlib.import_module(new)

    def exec_module(self, module) -> None:
        """The module is the new one, executed already."""


def lookup(entry: str):
    """The object an entry of :data:`SEAMS` names, its module imported on first use."""
    module, _, name = SEAMS[entry].partition(":")
    return getattr(importlib.import_module(module), name)

