"""Loading and validating the workflow config against ``schemas/config.schema.yaml``.

The Snakefile calls :func:`validate` before it defines any rule. Every error
names the config key it is about: a missing key, a wrong type, an unknown
strategy name, or a task in ``tasks:`` that ``task_settings:`` does not
describe. Defaults from the schema are filled in.

CLI (checks a config file without Snakemake, as ``snakemake --configfile
FILE`` reads it: over the workflow's ``config.yaml``, or ``--alone``;
``--markdown`` prints every key of the schema with its type, default and
description, the body of ``docs/configuration.md``)::

    docnmt-check-config mine.yaml            # or: python -m docnmt.config mine.yaml
    python -m docnmt.config --markdown
"""

from __future__ import annotations

import copy
import functools
import math
import sys
from pathlib import Path

import yaml

from .seams import lookup
from .textio import cli_errors
from .manual import argument_parser

#: The checkout the package is installed from (editable, by `make setup`): its schema and default config.
CHECKOUT = Path(__file__).resolve().parents[2]
SCHEMA = CHECKOUT / "schemas" / "config.schema.yaml"
WORKFLOW_CONFIG = CHECKOUT / "config.yaml"

#: The search strategies of the paper, in the order of its tables. One name
#: each, used in config, rule, CLI, output path and table row.
STRATEGIES = (
    "sentence-level",
    "no-context",
    "full-segment",
    "last-sentence",
    "first-sentence",
    "2-pass",
    "doc-trans",
    "doc-trans-beam",
    "cheating",
)


class ConfigError(Exception):
    """An invalid config; the message names the key."""


def _key(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _fill_defaults(schema: dict, instance, root: dict):
    """Fill in ``default`` values of object properties, recursively."""
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        schema = root["$defs"][name]
    if not isinstance(instance, dict) or schema.get("type") != "object":
        return
    for name, sub in schema.get("properties", {}).items():
        if name not in instance and "default" in sub:
            instance[name] = copy.deepcopy(sub["default"])
        if name in instance:
            _fill_defaults(sub, instance[name], root)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for name, value in instance.items():
            if name not in schema.get("properties", {}):
                _fill_defaults(extra, value, root)


def _describe(error) -> str:
    key = _key(error.absolute_path)
    if error.validator in ("oneOf", "anyOf") and error.context:
        # "all, or a list": an error inside the value (an unknown item of the list) says what is wrong; else the key's
        # description says what is allowed
        deepest = max(error.context, key=lambda e: len(e.absolute_path))
        if len(deepest.absolute_path) > len(error.absolute_path):
            return _describe(deepest)
        rule = " ".join(error.schema.get("description", error.message).split())
        return f"config key {key!r}: {error.instance!r} is not allowed; {rule}"
    if error.validator == "required":
        missing = error.message.split("'")[1]
        return f"config key {_key(list(error.absolute_path) + [missing])!r} is missing (required)"
    if error.validator == "additionalProperties":
        return f"config key {key!r}: {error.message}"
    if error.validator == "enum":
        allowed = ", ".join(map(str, error.validator_value))
        return f"config key {key!r}: unknown value {error.instance!r}, expected one of: {allowed}"
    if error.validator == "pattern":
        rule = error.schema.get("description", f"expected a match of {error.validator_value}").strip()
        if "propertyNames" in error.absolute_schema_path:
            key = _key(list(error.absolute_path) + [error.instance])
            return f"config key {key!r}: the name {error.instance!r} is not allowed; use {rule}"
        return f"config key {key!r}: {error.instance!r} is not allowed; use {rule}"
    if error.validator == "type":
        return f"config key {key!r}: expected {error.validator_value}, found {error.instance!r} ({type(error.instance).__name__})"
    return f"config key {key!r}: {error.message}"


def _not_finite(instance, path=()) -> str | None:
    """The first key of a config (depth first) whose value is nan or an infinity, as a message; JSON schema's
    bounds let both through (nan compares false with every bound)."""
    if isinstance(instance, float) and not math.isfinite(instance):
        return f"config key {_key(list(path))!r}: expected a finite number, found {instance!r}"
    items = instance.items() if isinstance(instance, dict) else enumerate(instance) if isinstance(instance, list) else ()
    for name, value in items:
        found = _not_finite(value, (*path, name))
        if found:
            return found
    return None


def _check_load_options(models: dict, key: str, backend) -> None:
    """A task's load options against its backend's declaration (:attr:`docnmt.decode.backend.Backend.options`): the
    options block is its backend's (``engine_args``, ``endpoint``), holds only its options (and its cost columns'
    ``prices``), and gives the ones it must."""
    registry, names, required = lookup("backends"), lookup("backend_names"), lookup("required_load_options")

    own = backend.options_key if backend.options is not None else None
    for block in dict.fromkeys(b.options_key for b in registry.values() if b.options is not None):
        if block in models and block != own:
            raise ConfigError(f"config key '{key}.{block}': {block} is for "
                              f"{names(lambda b: b.options is not None and b.options_key == block, ' or ')} models, "
                              f"not {backend.name} models" + (f" (theirs: {key}.{own})" if own else ""))
    needed = required(backend.options)
    if needed and own not in models:
        raise ConfigError(f"config key '{key}.{own}': {backend.name} models need their {own} "
                          f"({', '.join(needed)}, ...): {backend.summary}")
    given = set(models.get(own) or {}) if own else set()
    priced = {"prices"} if backend.cost is not None and backend.cost.price is not None else set()
    unknown = sorted(given - set(backend.load_options) - priced)
    if unknown:
        raise ConfigError(f"config key '{key}.{own}.{unknown[0]}': not an option of {backend.name} models; theirs: "
                          f"{', '.join(backend.load_options)}")


def _check_models(name: str, task: dict) -> None:
    """What the schema cannot say clearly about a task's models: a fairseq model has a data folder, a transformers
    model none (its folder holds the tokenizer, which segments plain text, so neither Moses nor BPE applies, and
    the workflow's ContraPro evaluation needs fairseq so far); the default of ``tokenize`` by backend."""
    described, names = lookup("backend"), lookup("backend_names")

    models, key = task["models"], f"task_settings.{name}.models"
    backend = described(models["backend"])
    _check_load_options(models, key, backend)
    for level in ("sentence", "document"):
        if level not in models:
            continue
        given, expected = sorted({"checkpoint", "model"} & set(models[level])), "model" if backend.served else "checkpoint"
        if given != [expected]:
            raise ConfigError(f"config key '{key}.{level}': expected {expected}: " + (
                "the model's name on the server" if backend.served else "the checkpoint or model folder")
                + f" for a {backend.name} model, found {', '.join(given) or 'neither checkpoint nor model'}")
        if backend.needs_data and "data" not in models[level]:
            raise ConfigError(f"config key '{key}.{level}.data' is missing (required for a {backend.name} model: its "
                              "data folder with dict.SRC.txt and dict.TGT.txt)")
        if not backend.needs_data and "data" in models[level]:
            raise ConfigError(f"config key '{key}.{level}.data': a data folder is for "
                              f"{names(lambda b: b.needs_data)} models; a {backend.name} model is {backend.summary}")
    if backend.plain_text:
        for setting in ("bpe_codes", "tokenize"):
            if models.get(setting, "none") != "none":
                raise ConfigError(f"config key '{key}.{setting}': {models[setting]!r} is for "
                                  f"{names(lambda b: not b.plain_text)} models; a {backend.name} model's tokenizer "
                                  "segments plain text (none)")
    if task.get("contrapro") and not backend.contrapro_in_workflow:
        raise ConfigError(f"config key 'task_settings.{name}.contrapro': the workflow's ContraPro evaluation "
                          f"needs {names(lambda b: b.contrapro_in_workflow, ' or ')} models so far; score a "
                          f"{backend.name} model with docnmt.score.contrastive --backend {backend.name}")
    if "language_codes" in models and not backend.language_codes:
        raise ConfigError(f"config key '{key}.language_codes': for {names(lambda b: b.language_codes)} models "
                          f"(language tokens, or the languages a prompt names); {backend.name} models name their "
                          "languages in their dictionaries")
    for given in ("template", "templates"):
        if given in models and not backend.prompt_template:
            raise ConfigError(f"config key '{key}.{given}': a prompt template is for "
                              f"{names(lambda b: b.prompt_template, ' or ')} models, not {backend.name} models")
    models.setdefault("tokenize", backend.default_tokenize)


def with_backends(schema: dict) -> dict:
    """The config's schema with what the registered backends declare: ``models.backend``'s names, and each options
    block (``models.engine_args``, ``models.endpoint``) with the properties of the options the backends that use it
    declare (:func:`docnmt.decode.load_options.schema_properties`). The schema file keeps the blocks' descriptions and what
    is not a load option (a served model's ``prices``)."""
    registry, required = lookup("backends"), lookup("required_load_options")
    schema_properties = lookup("load_option_schema")

    models = schema["$defs"]["models"]["properties"]
    models["backend"]["enum"] = list(registry)
    models["backend"]["description"] += " " + "; ".join(f"{b.name}: {b.summary}" for b in registry.values()) + "."
    declaring = [b for b in registry.values() if b.options is not None]
    for described in declaring:
        # a block two backends share gets no defaults: validation would fill one backend's into the other's tasks
        shared = sum(b.options_key == described.options_key for b in declaring) > 1
        block = models.setdefault(described.options_key, {
            "description": f"{described.name}: its models' load options", "type": "object",
            "additionalProperties": False})
        declared = {name: {k: v for k, v in entry.items() if not (shared and k == "default")}
                    for name, entry in schema_properties(described.options).items()
                    if name not in block.get("properties", {})}
        block["properties"] = {**declared, **block.get("properties", {})}
        block["required"] = sorted(set(block.get("required", [])) | set(required(described.options)))
    return schema


def with_metrics(schema: dict, modules=()) -> dict:
    """The config's schema with a block ``metrics.NAME`` for every metric that declares options
    (:class:`docnmt.score.metric.Metric`), the package's and those of the config's ``metrics.modules``."""
    metrics = lookup("metrics")

    block = schema["properties"]["metrics"]["properties"]
    try:
        declared = metrics(modules)
    except ValueError as err:
        raise ConfigError(f"config key 'metrics.modules': {err}") from None
    for metric in declared.values():
        if metric.options and metric.name not in block:
            block[metric.name] = {"description": f"{metric.name}: {metric.summary} (docs/scoring.md).",
                                  "type": "object", "additionalProperties": False, "default": {},
                                  "properties": metric.options}
    return schema


def schema_file(path: Path = SCHEMA) -> dict:
    """The schema file, parsed once per version of the file (libyaml's parser where PyYAML has it): a fresh copy
    each call, which :func:`with_backends` and :func:`with_metrics` extend."""
    path = Path(path)
    stat = path.stat()
    return copy.deepcopy(_parsed_schema(str(path.resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4)
def _parsed_schema(path: str, mtime_ns: int, size: int) -> dict:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)


def validate(config: dict, schema_path: Path = SCHEMA) -> dict:
    """Return a validated copy of ``config`` with defaults filled in; raise :class:`ConfigError`."""
    import jsonschema

    config_modules = lookup("config_metric_modules")

    schema = with_backends(schema_file(schema_path))
    schema = with_metrics(schema, config_modules(config))
    config = copy.deepcopy(dict(config))
    _fill_defaults(schema, config, schema)
    not_finite = _not_finite(config)
    if not_finite:
        raise ConfigError(not_finite)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        raise ConfigError(_describe(errors[0]))
    known = config["task_settings"]
    for i, task in enumerate(config["tasks"]):
        if task not in known:
            raise ConfigError(
                f"config key 'tasks[{i}]': unknown task {task!r}; tasks described in task_settings: {', '.join(sorted(known))}"
            )
    if len(set(config["tasks"])) != len(config["tasks"]):
        raise ConfigError("config key 'tasks': a task is listed twice")
    for name, task in known.items():
        if "models" in task:
            _check_models(name, task)
    _check_sources(config["sources"])
    presets = config["training"]["presets"]
    for name, task in known.items():
        if task["model"] not in presets:
            raise ConfigError(
                f"config key 'task_settings.{name}.model': unknown preset {task['model']!r}; "
                f"presets in training.presets: {', '.join(sorted(presets)) or '(none)'}"
            )
        if task["src"] == task["tgt"]:
            raise ConfigError(f"config key 'task_settings.{name}.tgt': must differ from src ({task['src']!r})")
    problem = lookup("variant_problem")(config)
    if problem:
        raise ConfigError(f"config key '{problem}")
    _check_refine(config)
    _check_speculative(config)
    return config


def _check_refine(config: dict) -> None:
    """refine's draft is another configured strategy (decoded before it, on the same sets)."""
    if "refine" not in config["strategies"]:
        return
    draft = config["refine"]["draft"]
    if draft == "refine":
        raise ConfigError("config key 'refine.draft': refine cannot improve its own translation: name the strategy "
                          "whose translation it improves (default full-segment)")
    if draft not in config["strategies"]:
        raise ConfigError(f"config key 'refine.draft': {draft!r} is not among the configured strategies "
                          f"({', '.join(config['strategies'])}); refine improves a configured strategy's translation")


def _check_speculative(config: dict) -> None:
    """``decode.speculative: ngram`` needs a configured task whose backend's engine has it, and no epsilon sampling
    (vLLM runs no logits processor under speculative decoding)."""
    speculative = config["decode"]["speculative"]
    if speculative == "none":
        return
    described, names = lookup("backend"), lookup("backend_names")
    settings = config["task_settings"]  # a task without models: trains the workflow's own (the default backend)
    backends = {task: settings[task]["models"]["backend"] if "models" in settings[task] else lookup("default_backend")
                for task in config["tasks"]}
    able = [task for task, name in backends.items() if described(name).can("speculative")]
    if not able:
        raise ConfigError(f"config key 'decode.speculative': {speculative} is for "
                          f"{names(lambda b: b.can('speculative'), ' or ')} tasks; the configured tasks' models are "
                          f"{', '.join(sorted(set(backends.values())))} (decode.verify_drafts verifies drafts there)")
    if config["mbr"]["strategies"] and config["mbr"]["candidates"] == "sampling":
        raise ConfigError(f"config key 'decode.speculative': {speculative} cannot run with mbr.candidates sampling "
                          f"(task {able[0]}: vLLM runs no logits processor under speculative decoding, and epsilon "
                          f"sampling is one)")


def _check_sources(sources: dict) -> None:
    """Each download source's declaration works (its locations, checksums and member specs)."""
    source_problem = lookup("source_problem")
    for name, entry in sources.items():
        problem = source_problem(name, entry)
        if problem:
            raise ConfigError(f"config key {problem}")


def tables_name(config: dict) -> str:
    """The name of a validated config's combined tables and plots (``tables.name``): set, or the configured tasks
    joined by "+"."""
    return config["tables"]["name"] or "+".join(config["tasks"])


def read(path: Path) -> dict:
    """A YAML config file as a mapping; :class:`ConfigError` naming the file otherwise."""
    if not Path(path).is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        config = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = " ".join(str(getattr(err, "problem", None) or err).split())
        raise ConfigError(f"{path}: not valid YAML{where}: {reason}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys, found {type(config).__name__}")
    return config


def merge(base: dict, update: dict) -> dict:
    """``update`` over ``base``, nested mappings merged (Snakemake's --configfile over the workflow's config)."""
    out = dict(base)
    for key, value in update.items():
        out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load(path: Path, schema_path: Path = SCHEMA) -> dict:
    """Load a YAML config file and validate it, alone."""
    return validate(read(path), schema_path)


def load_workflow(configfile: Path | None = None) -> dict:
    """The config the workflow runs with: the checkout's ``config.yaml``, ``configfile`` merged over it, validated."""
    if not WORKFLOW_CONFIG.is_file():
        raise ConfigError(f"{WORKFLOW_CONFIG}: not found; the docnmt package reads the workflow's config.yaml and "
                          "schemas/ from its checkout, so install it from one, editable (`make setup`, or "
                          "`pip install -e CHECKOUT`)")
    config = read(WORKFLOW_CONFIG)
    if configfile is not None:
        config = merge(config, read(configfile))
    return validate(config)


# ---- the schema as a reference page ---------------------------------------------
#: Placeholders for the names under an object whose keys the user chooses.
NAME_PLACEHOLDERS = {"task_settings": "<task>", "sources": "<source>", "presets": "<preset>",
                     "runtime_minutes": "<preset>", "members": "<role>"}


def _resolve(node: dict, schema: dict) -> dict:
    """A schema node with its $ref (to #/$defs/...) merged in; the node's own keys win."""
    if "$ref" not in node:
        return node
    target = schema
    for part in node["$ref"].lstrip("#/").split("/"):
        target = target[part]
    merged = dict(_resolve(target, schema))
    merged.update({k: v for k, v in node.items() if k != "$ref"})
    return merged


def _type(node: dict) -> str:
    if "enum" in node:
        return " \\| ".join(str(v) for v in node["enum"])
    if "oneOf" in node:
        return " or ".join(_type(alternative) for alternative in node["oneOf"])
    kind = node.get("type", "")
    kind = " or ".join(kind) if isinstance(kind, list) else kind
    if kind == "array" and "items" in node:
        item = node["items"]
        kind = f"list of {_type(item) if 'oneOf' in item else item.get('type', 'name') if '$ref' not in item else 'name'}"
    return kind or "object"


def schema_keys(schema: dict | None = None) -> list[tuple[str, str, str, str]]:
    """Every key of the config schema, depth first: (dotted path, type, default, description)."""
    import json

    schema = schema or with_metrics(with_backends(schema_file(SCHEMA)))
    rows: list[tuple[str, str, str, str]] = []

    def walk(node: dict, path: str, key: str) -> None:
        node = _resolve(node, schema)
        if path:
            default = json.dumps(node["default"]) if "default" in node else ""
            rows.append((path, _type(node), default, " ".join(str(node.get("description", "")).split())))
        for name, child in node.get("properties", {}).items():
            walk(child, f"{path}.{name}" if path else name, name)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            extra = _resolve(extra, schema)
            if "properties" in extra or "description" in extra:
                walk(extra, f"{path}.{NAME_PLACEHOLDERS.get(key, '<name>')}", NAME_PLACEHOLDERS.get(key, "<name>"))

    walk(schema, "", "")
    return rows


def changed_keys(config: dict) -> set[str]:
    """The keys of the schema (:func:`schema_keys`'s paths) whose values in ``config`` (validated) differ from the
    workflow's ``config.yaml``: what a workflow run tells the option ledger (:mod:`docnmt.ledger`)."""
    from .ledger import changed_keys as changed

    return changed(config, load_workflow(), [row[0] for row in schema_keys()])


def schema_markdown(schema: dict | None = None) -> str:
    """The reference table of ``docs/configuration.md``: one row per key."""
    lines = ["| key | type | default | description |", "|---|---|---|---|"]
    for path, kind, default, description in schema_keys(schema):
        cells = [f"`{path}`", kind, f"`{default}`" if default else "", description.replace("|", "\\|")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.config", "Validate a workflow config file, as `snakemake --configfile FILE` "
                                              "reads it: merged over the workflow's config.yaml.")
    parser.add_argument("config", type=Path, nargs="?", help="the config file to check")
    parser.add_argument("--alone", action="store_true",
                        help="validate the file by itself, not merged over the workflow's config.yaml")
    parser.add_argument("--markdown", action="store_true",
                        help="print every key of the schema as a Markdown table (docs/configuration.md) and exit")
    args = parser.parse_args(argv)
    if args.markdown:
        print(schema_markdown(), end="")
        return 0
    if args.config is None:
        parser.error("give a config file to check, or --markdown")
    try:
        config = load(args.config) if args.alone else load_workflow(args.config)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None
    how = "alone" if args.alone else f"over {WORKFLOW_CONFIG.name}"
    print(f"{args.config}: valid ({how}); tasks: {', '.join(config['tasks'])}")
    return 0


if __name__ == "__main__":
    main()
