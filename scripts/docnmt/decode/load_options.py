"""The load options of a backend (:attr:`docnmt.decode.backend.Backend.options`): a typed dataclass its package declares,
whose fields (:func:`option`) say each option's type, default and help. From it follow how a CLI's
``--engine-args KEY=VALUE,...`` (lm-evaluation-harness's ``--model_args`` form) is read (:func:`parse_load_options`),
the config's schema of ``models.engine_args`` (an engine's) or ``models.endpoint`` (a served model's)
(:func:`schema_properties`), the options that only say how requests travel (:func:`transport_options`), the ones with a
command-line flag of their own (``--base-url``), and the docs' table of the config's keys
(``python -m docnmt.config --markdown``, docs/configuration.md)."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

#: How :func:`parse_load_options` reads a boolean option's value.
BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
#: An option's Python type and its JSON schema type.
JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}
#: What a value of each type looks like, in an error.
EXPECTS = {int: "an integer", float: "a number", str: "text", bool: "true or false"}


def option(help: str, default: Any = None, *, schema: dict | None = None, transport: bool = False,
           flag: bool = False, required: bool = False):
    """A field of a backend's options dataclass: ``help`` (the CLI's, the schema's description and the docs'),
    its ``default`` (None: the backend's own, unset), ``schema``: more JSON-schema constraints (``minimum``,
    ``pattern``, ...); ``transport``: it says how requests reach a served model, not what comes back, so a decode's
    resume journal holds across it (a preempted job whose server restarted at another address resumes); ``flag``:
    it has a command-line flag of its own (``--base-url`` for ``base_url``) beside ``--engine-args``; ``required``:
    a task's options block must give it."""
    return dataclasses.field(default=default, metadata={"help": help, "schema": dict(schema or {}),
                                                        "transport": transport, "flag": flag,
                                                        "required": required})


@dataclasses.dataclass(frozen=True)
class Spec:
    """One load option as its declaration says: name, Python type, default, help and the rest of :func:`option`."""

    name: str
    kind: type
    default: Any
    help: str
    schema: dict
    transport: bool
    flag: bool
    required: bool

    @property
    def cli_flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def specs(options: type | None) -> dict[str, Spec]:
    """The load options an options dataclass declares, by name, in its order (none for None)."""
    if options is None:
        return {}
    hints = typing.get_type_hints(options)
    found = {}
    for field in dataclasses.fields(options):
        kinds = [k for k in typing.get_args(hints[field.name]) if k is not type(None)] or [hints[field.name]]
        kind = kinds[0]
        if kind not in JSON_TYPES or (isinstance(hints[field.name], types.UnionType) and len(kinds) > 1):
            raise TypeError(f"{options.__qualname__}.{field.name}: a load option is one of int, float, str or bool "
                            f"(or None), not {hints[field.name]}")
        meta = field.metadata
        found[field.name] = Spec(field.name, kind, field.default, meta.get("help", ""), dict(meta.get("schema", {})),
                                 bool(meta.get("transport")), bool(meta.get("flag")), bool(meta.get("required")))
    return found


def parse_load_options(text: str | None, options: type | None, backend: str, where: str = "--engine-args") -> dict:
    """``KEY=VALUE,...`` as a backend's typed load options (``options``: its dataclass, :func:`specs`); a ValueError
    naming ``where`` and the first key the backend does not take or a value of the wrong type."""
    known = specs(options)
    parsed: dict = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or key not in known:
            if not known:
                raise ValueError(f"{where}: {backend} models take no load options, found {item!r}")
            raise ValueError(f"{where}: expected KEY=VALUE with KEY one of {', '.join(known)} (for {backend} models), "
                             f"found {item!r}")
        parsed[key] = typed(known[key], value, where)
    return parsed


def typed(spec: Spec, value: str, where: str):
    """A text value as the option's type; a ValueError naming ``where`` and the option."""
    try:
        if spec.kind is bool:
            return BOOLEANS[value.lower()]
        return spec.kind(value)
    except (ValueError, KeyError):
        raise ValueError(f"{where}: {spec.name} expects {EXPECTS[spec.kind]}, found {value!r}") from None


def schema_properties(options: type | None) -> dict:
    """The JSON-schema properties of a backend's options (the config's ``models.<options_key>``): each option's
    type, description, default and constraints."""
    properties = {}
    for spec in specs(options).values():
        entry = {"description": spec.help, "type": JSON_TYPES[spec.kind], **spec.schema}
        if spec.default is not None:
            entry["default"] = spec.default
        properties[spec.name] = entry
    return properties


def required(options: type | None) -> list[str]:
    """The options a task's options block must give."""
    return [spec.name for spec in specs(options).values() if spec.required]


def transport_options() -> tuple[str, ...]:
    """The load options of every registered backend that say how requests travel, not what comes back
    (:func:`option`'s ``transport``): a decode's journal key leaves them out."""
    from .backend import REGISTRY

    return tuple(dict.fromkeys(spec.name for described in REGISTRY.values()
                               for spec in specs(described.options).values() if spec.transport))


def flagged_options() -> dict[str, Spec]:
    """The load options with a command-line flag of their own (``--base-url``), of every registered backend, by
    name."""
    from .backend import REGISTRY

    return {spec.name: spec for described in REGISTRY.values() for spec in specs(described.options).values()
            if spec.flag}


def models_load_options(models: dict) -> dict:
    """The load options a task's ``models:`` block gives its models: those of its backend's options block
    (``models.<options_key>``: vLLM's ``engine_args``, a served model's ``endpoint``), without its other keys (a
    served model's ``prices``), or none."""
    from .backend import DEFAULT, backend

    described = backend(models.get("backend", DEFAULT))
    block = models.get(described.options_key) or {}
    return {key: value for key, value in block.items() if key in described.load_options}
