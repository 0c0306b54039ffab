# The config (read by the Snakefile, validated here), the interpreter and shell prefix of the rules' commands,
# the wildcard constraints, and the glue. The rules' logic, every input function, parameter and target, is the
# package's (docnmt.workflow, as `wf`: plain functions of the config, unit-tested), and every path of a rule
# comes from docnmt.layout: the rule files wire them and spell no path themselves.
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

# Snakemake's own process reads the config and derives paths with this checkout's package, also where
# Snakemake runs from an environment without it (--sdm conda). The rules run the package installed in
# their interpreter (.venv by `make setup`, or each conda env), checked below.
SCRIPTS = os.path.join(workflow.basedir, "scripts")
sys.path.insert(0, SCRIPTS)

from docnmt import layout  # noqa: E402  where the workflow keeps every file (one definition)
from docnmt import ledger  # noqa: E402  the option ledger of the test suite (off unless DOCNMT_OPTION_LEDGER is set)
from docnmt import workflow as wf  # noqa: E402  the rules' logic: inputs, parameters, targets
from docnmt.config import ConfigError, changed_keys, tables_name, validate  # noqa: E402
from docnmt.textio import InputError  # noqa: E402
from docnmt.installation import install_problems, missing_modules, setup_hint, shell_prefix  # noqa: E402


def _conda_deployment():
    from snakemake_interface_executor_plugins.settings import DeploymentMethod

    return DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method


# Rule commands run `python -m docnmt.<module>` after this prefix (quoted paths,
# strict mode). Without --sdm conda, `python` is the interpreter that runs
# Snakemake, which must have the project's packages and this package installed
# (editable, from this checkout); with --sdm conda, each rule's env provides
# them: its post-deploy script installs the package from DOCNMT_CHECKOUT.
if _conda_deployment():
    os.environ.update(DOCNMT_CHECKOUT=workflow.basedir)  # for the envs' post-deploy scripts
else:
    if missing_modules():
        raise WorkflowError(setup_hint(missing_modules()))
    _install_error, _install_warning = install_problems(workflow.basedir)
    if _install_error:
        raise WorkflowError(_install_error)
    if _install_warning:
        logger.warning(f"warning: {_install_warning}")
shell.prefix(shell_prefix(None if _conda_deployment() else sys.executable).replace("{", "{{").replace("}", "}}"))

try:
    _validated = validate(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
    wf.tasks.check(_validated)
    wf.metrics.check(_validated)
    #: What the COMET rules put before PATH: unbabel-comet's environment (make comet), or nothing with --sdm conda.
    COMET_PATH = wf.metrics.comet_path(_validated, workflow.basedir, _conda_deployment())
    wf.environments.check(_validated, workflow.basedir, _conda_deployment())
except (ConfigError, ValueError, InputError) as err:
    raise WorkflowError(f"invalid config: {err}") from None
config.clear()
config.update(_validated)


# The option ledger (docnmt.ledger; on where DOCNMT_OPTION_LEDGER names a folder, as in `make test`): the config keys
# this run set to other values than config.yaml's, once its jobs are done (not in a dry run).
onsuccess:
    if ledger.active():
        ledger.record_config(workflow.main_snakefile, changed_keys(config))


#: The name of the configured tasks' tables and plots together (tables.name; results/tables/NAME/).
TABLES_NAME = tables_name(config)


wildcard_constraints:
    task=wf.tasks.alternatives(wf.tasks.task_names(config)),
    split=wf.tasks.alternatives(wf.tasks.all_splits(config)),
    source=wf.tasks.alternatives(wf.corpora.source_names(config)),
    level=wf.tasks.alternatives(wf.tasks.LEVELS),
    lang="[a-z]{2,3}",
    stage="tok|bpe",
    shard=r"\d+-of-\d+",
    evalset=wf.tasks.alternatives(wf.tasks.all_evalsets(config)),


scattergather:
    shard=wf.preprocess.shards(config),


#: What the rules that load the task's model share, from docnmt.workflow.model_rules (params path, model, k,
#: separator, dtype; their GPUs); their conda env is wf.model_rules.model_conda's.
MODEL_PARAMS = wf.model_rules.model_params(config, workflow.basedir, _conda_deployment())
model_gpus = wf.model_rules.model_gpus(config)
#: A rule's command run in an environment of its own (its params.path first on PATH), written once.
in_environment = wf.environments.in_environment


#: The name of a strategy's decode rule (rules/decode.smk, where tests/test_docs.py finds it), from the registry.
strategy_rule_name = wf.systems.strategy_rule_name


def metric_functions(name):
    """The input, option and runtime functions of the seam's rule of metric ``name`` (docnmt.workflow.score, .metrics)."""
    return {
        "inputs": lambda w: wf.score.metric_inputs(config, name, w.task, w.evalset),
        "options": lambda w, input: wf.score.metric_args(config, name, w.task, w.evalset, input),
        "outputs": lambda w, output: wf.metrics.metric_output_args(wf.metrics.metric(config, name), output),
        "runtime": lambda w: wf.metrics.metric_runtime(config, name, w.task),
    }
