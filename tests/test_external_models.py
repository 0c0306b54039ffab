"""A researcher's own models: trained with plain fairseq-train outside the workflow (their own BPE codes, their
own dictionary, the separator <brk>), then checked, decoded with every strategy, scored and tabled by the
workflow, whose decodes equal docnmt.decode.cli's for the same checkpoints. The Hugging Face models' tasks are in
tests/test_external_hf_models.py, and the manual's blocks, run as written, in tests/test_external_models_manual.py:
modules of their own, so that each runs on its own worker (none over 5 minutes on one)."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import REPO, run_snakemake, shell_commands, tool_env
from docnmt.corpora.corpus import read_split
from docnmt.decode.backend import names
from docnmt.textio import read_lines

#: make test-full: models trained elsewhere, and the manual's blocks for them, run for real.
pytestmark = [pytest.mark.workflow, pytest.mark.trains, pytest.mark.full]

K = 3
SEPARATOR = "<brk>"
#: the registered backends whose prompt is a conversation (source-primed's), as the notes name them
CONVERSING = names(lambda b: b.conversation, " or ")
#: subword-nmt's own command line (its console script ``subword-nmt``)
SUBWORD_NMT = "from subword_nmt.subword_nmt import main; main()"
PRESET = [
    "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1", "--encoder-embed-dim", "32",
    "--decoder-embed-dim", "32", "--encoder-ffn-embed-dim", "64", "--decoder-ffn-embed-dim", "64",
    "--encoder-attention-heads", "2", "--decoder-attention-heads", "2", "--share-all-embeddings",
    "--optimizer", "adam", "--lr", "0.003", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "10",
    "--max-tokens", "4000", "--max-update", "40", "--no-epoch-checkpoints", "--cpu",
    "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1",
]


def python(*args, cwd):
    env = dict(tool_env(), TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    return subprocess.run([sys.executable, *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True,
                          check=True)


@pytest.fixture(scope="module")
def own(tmp_path_factory) -> Path:
    """What a researcher brings: demo-generator data prepared with their own scripts and two trained models. Made
    once per session (this module and tests/test_external_models_manual.py read it)."""
    from helpers import made_once

    return made_once(tmp_path_factory, "own-models", _own)


def _own(root: Path) -> Path:
    python("-m", "docnmt.corpora.demo", "--outdir", root / "raw", "--seed", 11, "--train-docs", 150,
           "--valid-docs", 8, "--test-docs", 6, cwd=root)
    from docnmt.preprocess.tokenize import tokenize

    splits = {s: read_split(root / f"raw/{s}.en", root / f"raw/{s}.de", root / f"raw/{s}.docids")
              for s in ("train", "valid", "test")}
    for split, docs in splits.items():
        for lang, side in (("en", "src"), ("de", "tgt")):
            (root / f"{split}.tok.{lang}").write_text("".join(tokenize(s, lang) + "\n" for d in docs for s in getattr(d, side)))
    # their own joint BPE, with subword-nmt's own command line
    python("-c", SUBWORD_NMT, "learn-joint-bpe-and-vocab", "--input", root / "train.tok.en", root / "train.tok.de",
           "-s", 400, "-o", root / "bpe.codes", "--write-vocabulary", root / "vocab.en", root / "vocab.de", cwd=root)
    for split in splits:
        for lang in ("en", "de"):
            python("-c", SUBWORD_NMT, "apply-bpe", "-c", root / "bpe.codes", "--input", root / f"{split}.tok.{lang}",
                   "--output", root / f"{split}.bpe.{lang}", cwd=root)
    # their own k=3 windows, joined by <brk>, within documents
    for split, docs in splits.items():
        for lang in ("en", "de"):
            lines, out, start = read_lines(root / f"{split}.bpe.{lang}"), [], 0
            for doc in docs:
                part = lines[start:start + len(doc)]
                out += [f" {SEPARATOR} ".join(part[max(0, i - K + 1): i + 1]) for i in range(len(part))]
                start += len(doc)
            (root / f"{split}.win.{lang}").write_text("".join(line + "\n" for line in out))
    for level, prefix in (("sentence", "bpe"), ("document", "win")):
        python("-m", "fairseq_cli.preprocess", "--source-lang", "en", "--target-lang", "de", "--joined-dictionary",
               "--trainpref", f"train.{prefix}", "--validpref", f"valid.{prefix}", "--destdir", f"{level}-bin",
               "--workers", 1, cwd=root)
        python("-m", "fairseq_cli.train", f"{level}-bin", *PRESET, "--save-dir", f"{level}-ck", cwd=root)
    # the test documents, raw, as a prepared corpus folder
    (root / "corpus").mkdir()
    for ext in ("en", "de", "docids"):
        (root / "corpus" / f"test.{ext}").write_bytes((root / f"raw/test.{ext}").read_bytes())
    return root


def search_settings() -> dict:
    """The search settings of every workflow run on models trained elsewhere (here and in
    tests/test_external_hf_models.py): beam 2 and h 2 keep the barely trained models' decodes short; MBR selection's
    workflow runs in the demo; every strategy of the registry (source-primed, beyond the paper's nine, runs on the
    causal LM's task, the others skip it)."""
    from docnmt.decode.strategies import STRATEGIES

    return {"beam": 2, "h": 2, "mbr": {"strategies": []}, "strategies": list(STRATEGIES)}


def external_config(own: Path, workdir: Path, tasks=(("mine", ("sentence", "document")),)) -> Path:
    """A config with one task per (name, levels) pair, each with the researcher's models of those levels."""
    settings = {}
    for name, levels in tasks:
        models = {"k": K, "separator": SEPARATOR, "bpe_codes": str(own / "bpe.codes"), "tokenize": "moses"}
        for level in levels:
            models[level] = {"checkpoint": str(own / f"{level}-ck/checkpoint_best.pt"), "data": str(own / f"{level}-bin")}
        settings[name] = {"description": "my own models", "src": "en", "tgt": "de", "pronoun_min_examples": 1,
                          "corpus": {"type": "prepared", "dir": str(own / "corpus")}, "models": models}
    config = {"tasks": [name for name, _ in tasks], **search_settings(), "task_settings": settings}
    path = workdir / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def row(table: str, strategy: str, task: str) -> list[str]:
    """The cells of a Markdown table's row of ``strategy`` under the columns of ``task``."""
    lines = [line for line in table.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] == strategy:
            return [c for h, c in zip(header, cells) if h.startswith(f"{task} ")]
    raise AssertionError(f"no row {strategy!r} in\n{table}")


def hf_task(workdir: Path, folder: Path) -> dict:
    """A task on a Hugging Face model (``models: backend: transformers``): the tiny Marian folder as both levels (it
    was trained on sentences and windows), on the first two demo test documents' first six sentences."""
    import hfmodel

    corpus = workdir / "hf-corpus"
    corpus.mkdir()
    docs = hfmodel.demo_documents()[1][:2]
    for ext, lines in (("en", [s for d in docs for s in d.src[:6]]), ("de", [t for d in docs for t in d.tgt[:6]]),
                       ("docids", [d.docid for d in docs for _ in d.src[:6]])):
        (corpus / f"test.{ext}").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    models = {"backend": "transformers", "k": K, "separator": SEPARATOR, "sentence": {"checkpoint": str(folder)},
              "document": {"checkpoint": str(folder)}}
    return {"description": "a Hugging Face model", "src": "en", "tgt": "de", "pronoun_min_examples": 1,
            "corpus": {"type": "prepared", "dir": str(corpus)}, "models": models}


#: A prompt template of one's own for a chat model (system and user; no plain part, which only a base model needs).
CHAT_TEMPLATE = "system: Render the {source_language} lines in {target_language}.\nuser: \"{source}\"\n"
#: One for a base model (a tokenizer without a chat template): the conversation written out as text.
PLAIN_TEMPLATE = ("system: Translate from {source_language} into {target_language}.\nuser: \"{source}\"\n"
                  "plain: {start: \"{system}\\n\\n\", user: \"{source_language}:\\n{source}\\n\", "
                  "assistant: \"{target_language}:\\n\", end: \"\\n\\n\"}\n")


def llm_task(workdir: Path, folder: Path, template: str = CHAT_TEMPLATE, name: str = "my-chat.yaml") -> dict:
    """A task on a causal LM (``models: backend: causal-lm``): the tiny Llama (tests/llmmodel.py) as both levels,
    on the same sentences as :func:`hf_task`, prompting with a template file of one's own (``models.template``)."""
    task = hf_task(workdir, folder)
    task["description"] = "a causal LM"
    (workdir / name).write_text(template, encoding="utf-8")
    task["models"] = {"backend": "causal-lm", "k": K, "sentence": {"checkpoint": str(folder)},
                      "document": {"checkpoint": str(folder)}, "template": str(workdir / name)}
    return task


def wmt_xml(own: Path, path: Path) -> Path:
    """The researcher's test documents as a WMT XML test set (WMT 2021 onward), written by hand: a reference A (the
    real one) and a reference B (the sources), paragraphs of two segments."""
    from xml.sax.saxutils import escape

    docs = read_split(own / "corpus/test.en", own / "corpus/test.de", own / "corpus/test.docids")

    def side(tag, attrs, sentences):
        paragraphs = ["<p>" + "".join(f'<seg id="{i + j + 1}">{escape(t)}</seg>' for j, t in enumerate(sentences[i:i + 2]))
                      + "</p>" for i in range(0, len(sentences), 2)]
        return f"<{tag} {attrs}>" + "".join(paragraphs) + f"</{tag}>"

    body = "".join(f'<doc id="{d.docid}" origlang="en">' + side("src", 'lang="en"', d.src)
                   + side("ref", 'lang="de" translator="A"', d.tgt) + side("ref", 'lang="de" translator="B"', d.src)
                   + "</doc>\n" for d in docs)
    path.write_text(f'<?xml version="1.0" encoding="utf-8"?>\n<dataset id="wmttest"><collection id="general">\n{body}'
                    "</collection></dataset>\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def two_tasks(own, tmp_path_factory) -> Path:
    """One workflow run, two tasks on the researcher's fairseq models: ``mine`` with both of them, ``mine-doc`` with
    the document-level one alone, its test split read from a WMT XML test set. decode.cache_bytes is set, as for a
    causal LM's prefix cache (tests/test_external_hf_models.py): fairseq holds none."""
    workdir = tmp_path_factory.mktemp("own-models-workflow")
    config = external_config(own, workdir, (("mine", ("sentence", "document")), ("mine-doc", ("document",))))
    data = yaml.safe_load(config.read_text())
    # mine-doc reads its test split from a WMT XML test set (two references; the first, A, is scored)
    data["task_settings"]["mine-doc"]["corpus"] = {"type": "prepared", "test": {
        "format": "wmt-xml", "file": str(wmt_xml(own, workdir / "wmttest.en-de.xml")), "reference": None}}
    data["decode"] = {"cache_bytes": "64M"}
    config.write_text(yaml.safe_dump(data))
    run_snakemake(workdir, "tables", "--profile", str(REPO / "profiles/cpu"), "--cores", "2", "--configfile",
                  str(config))
    return workdir


#: the tables of :func:`two_tasks`' run (tables.name: its tasks)
TABLES = "results/tables/mine+mine-doc"


def cli_decodes(own: Path, workdir: Path, folder: Path) -> dict[str, Path]:
    """docnmt.decode.cli on the researcher's document-level model and the workflow's test set, for the strategies
    that the workflow's run is compared on: strategy -> output text file."""
    outputs = {}
    for strategy in ("last-sentence", "doc-trans"):
        out = folder / f"cli-{strategy}"
        extra = ["--doc-trans-mode", "sequential"] if strategy == "doc-trans" else []
        python("-m", "docnmt.decode.cli", "--strategy", strategy, *extra,
               "--model", own / "document-ck/checkpoint_best.pt", "--data", own / "document-bin",
               "--src", workdir / "data/mine/bpe/test.en", "--docids", own / "corpus/test.docids",
               "--separator", SEPARATOR, "--k", K, "--beam", 2, "--tgt-lang", "de", "--output-bpe", f"{out}.bpe",
               "--output", f"{out}.txt", "--sidecar", f"{out}.json", cwd=REPO)
        outputs[strategy] = Path(f"{out}.txt")
    return outputs


def test_the_workflow_compares_the_strategies_on_models_trained_elsewhere(own, two_tasks, tmp_path):
    workdir = two_tasks
    assert not (workdir / "results/mine/models/document/checkpoint_best.pt").exists(), "no training"
    assert not list((workdir / "data/mine").glob("bin*")) and not (workdir / "data/mine/bpe/codes").exists()
    check = json.loads((workdir / "results/mine/models/document/check.json").read_text())
    assert (check["separator"], check["k"], check["bpe"]["unknown"]) == (SEPARATOR, K, 0)
    bleu = (workdir / f"{TABLES}/quality.md").read_text()
    for strategy in ("sentence-level", "2-pass", "doc-trans", "doc-trans-beam", "cheating"):
        assert row(bleu, strategy, "mine")[0] != "-", strategy
    # the workflow's decodes are docnmt.decode.cli's for the same checkpoints
    for strategy, output in cli_decodes(own, workdir, tmp_path).items():
        assert read_lines(output) == read_lines(workdir / f"results/mine/decode/test/{strategy}.txt"), strategy
    # and the workflow's BPE of the test set is what the researcher's own subword-nmt call gave
    assert read_lines(workdir / "data/mine/bpe/test.en") == read_lines(own / "test.bpe.en")


def test_a_missing_sentence_level_model_skips_its_strategies_and_the_tables_say_why(two_tasks):
    bleu = (two_tasks / f"{TABLES}/quality.md").read_text()
    assert row(bleu, "sentence-level", "mine-doc") == ["-"] * 4 and row(bleu, "2-pass", "mine-doc") == ["-"] * 4
    assert row(bleu, "doc-trans", "mine-doc")[0] != "-", "doc-trans runs sequentially without the first pass"
    assert "mine-doc: not decoded (\"-\"): sentence-level (no sentence-level model in task_settings.mine-doc.models); " \
           "2-pass (no sentence-level model in task_settings.mine-doc.models); source-primed (source-primed is for " \
           f"{CONVERSING} models" in bleu
    sidecar = json.loads((two_tasks / "results/mine-doc/decode/test/doc-trans.json").read_text())
    assert sidecar["doc_trans_mode"] == "sequential" and sidecar["separator"] == SEPARATOR
    parallel = json.loads((two_tasks / "results/mine/decode/test/doc-trans.json").read_text())
    assert parallel["doc_trans_mode"] == "parallel", "with both models, the workflow's default"
    assert "prefix_cache" not in parallel, "decode.cache_bytes is set; the fairseq backend holds no prefix cache"
    assert f"mine: not decoded (\"-\"): source-primed (source-primed is for {CONVERSING} models" in bleu
    assert row(bleu, "source-primed", "mine") == ["-"] * len(row(bleu, "source-primed", "mine"))


def test_a_wmt_xml_test_set_is_translated_and_scored_as_sacrebleu_scores_the_xml(two_tasks):
    """mine-doc's test split came from a WMT XML file: sacrebleu's own reading of the XML (its WMTXMLDataset), and
    corpus BLEU on it against reference A, give the tables' numbers."""
    import sacrebleu
    from sacrebleu.dataset.base import Dataset
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(two_tasks / "wmttest.en-de.xml"))
    clean = {name: [Dataset._clean(text) for text in values] for name, values in fields.items()}
    assert read_lines(two_tasks / "data/mine-doc/corpus/test.de") == clean["ref:A"]
    assert read_lines(two_tasks / "data/mine-doc/corpus/test.docids") == clean["docid"]
    scores = json.loads((two_tasks / "results/mine-doc/scores/test/bleu_ter.json").read_text())
    for strategy in ("doc-trans", "last-sentence"):
        hyps = read_lines(two_tasks / f"results/mine-doc/decode/test/{strategy}.txt")
        theirs = sacrebleu.corpus_bleu(hyps, [clean["ref:A"]])
        assert scores["systems"][strategy]["BLEU"]["score"] == pytest.approx(theirs.score, abs=1e-4), strategy
        bleu = (two_tasks / f"{TABLES}/quality.md").read_text()
        assert row(bleu, strategy, "mine-doc")[0].rstrip("*†") == f"{theirs.score:.1f}"


def test_a_wrong_separator_stops_before_any_decode_naming_the_dictionary(own, tmp_path):
    """The workflow's tables on the researcher's models, with <sep> configured instead of their <brk>."""
    workdir = tmp_path
    config = external_config(own, workdir)
    data = yaml.safe_load(config.read_text())
    data["task_settings"]["mine"]["models"]["separator"] = "<sep>"
    config.write_text(yaml.safe_dump(data))
    result = run_snakemake(workdir, "tables", "--cores", "2", "--resources", "gpu=1", "--configfile", str(config),
                           check=False)
    assert result.returncode != 0
    log = (workdir / "logs/mine/check_model/document.log").read_text()
    assert "dict.en.txt: expected the separator token '<sep>' of the document-level model" in log
    decoded = {p.stem for p in (workdir / "results/mine/decode").glob("*/*.txt")}
    assert decoded <= {"sentence-level"}, f"no document-level decode may start: {decoded}"


def readme_own_model_commands() -> list[str]:
    """The README's own-model commands, then those of docs/own-models.md's section on checks and translation
    (the one after `make demo`, which needs the demo's trained models in the working directory, runs in
    tests/decode/test_translate.py)."""
    readme = shell_commands(REPO / "README.md", "**Your own model.**")
    manual = shell_commands(REPO / "docs/own-models.md", "## Checks and translation")
    return readme + [c for c in manual if c not in readme and "--task demo" not in c]


def own_model_commands(own: Path, folder: Path) -> dict:
    """The README's and the manual's own-model commands (:func:`readme_own_model_commands`), each in a fresh shell
    after the README's activation line, from a project folder outside the checkout, on the researcher's models:
    the commands, what each printed, the translations, and the documents given."""
    venv = Path(sys.prefix)
    if sys.prefix == sys.base_prefix or not (venv / "bin/activate").exists():
        pytest.skip("the tests do not run in a virtual environment, so there is no .venv to activate")
    commands = readme_own_model_commands()
    work = folder / "my project"
    (work / "doc").mkdir(parents=True)
    (work / "doc/checkpoint_best.pt").symlink_to(own / "document-ck/checkpoint_best.pt")
    (work / "doc/data-bin").symlink_to(own / "document-bin")
    (work / "bpe.codes").symlink_to(own / "bpe.codes")
    (work / "test.tok.en").symlink_to(own / "test.tok.en")
    docs = read_split(own / "corpus/test.en", own / "corpus/test.de", own / "corpus/test.docids")
    (work / "talks.txt").write_text("\n".join("".join(s + "\n" for s in d.src) for d in docs), encoding="utf-8")
    models = {"k": K, "separator": SEPARATOR, "bpe_codes": str(work / "bpe.codes"), "tokenize": "moses",
              "document": {"checkpoint": str(work / "doc/checkpoint_best.pt"), "data": str(work / "doc/data-bin")}}
    (work / "mine.yaml").write_text(yaml.safe_dump({"tasks": ["mine"], "task_settings": {"mine": {
        "src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": str(own / "corpus")}, "models": models}}}))
    # a fresh login shell's environment (no venv active, nothing on PYTHONPATH), with the tests' one torch thread
    env = {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin",
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    results, outputs = [], []
    for command in commands:
        result = subprocess.run(["bash", "-c", f"set -e; source {shlex.quote(str(venv / 'bin/activate'))}; {command}"],
                                cwd=work, env=env, capture_output=True, text=True, timeout=600)
        results.append(result)
        if result.returncode != 0:
            break
        if command.startswith("docnmt-translate"):
            outputs.append((work / "talks.de.txt").read_text(encoding="utf-8"))
    return {"commands": commands, "results": results, "outputs": outputs, "work": work, "docs": docs}


def test_the_own_model_commands_of_the_readme_and_the_manual_run_as_a_user_types_them(own, tmp_path):
    """After the README's activation line, in a fresh shell, from a folder outside the checkout, with no
    PYTHONPATH, on the models trained with plain fairseq-train: the files the commands name are the researcher's."""
    run = own_model_commands(own, tmp_path)
    commands, outputs, work, docs = run["commands"], run["outputs"], run["work"], run["docs"]
    assert [c.split()[0] for c in commands] == ["docnmt-check-model", "docnmt-translate", "docnmt-translate"], commands
    for command, result in zip(commands, run["results"]):
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    printed = [result.stdout for result in run["results"]]
    assert "doc/checkpoint_best.pt" in printed[0], "the check names the model it passed"
    # the same layout: a line per sentence, a blank line between documents (the barely trained model gives
    # empty translations, which translate writes as empty lines and warns about)
    sentences = sum(len(d) for d in docs)
    given, translated = (work / "talks.txt").read_text(encoding="utf-8").splitlines(), outputs[0].splitlines()
    assert len(translated) == len(given) and all(t == "" for g, t in zip(given, translated) if g == "")
    assert f"doc-trans: {len(docs)} documents, {sentences} sentences" in printed[1], printed[1]
    assert outputs[1] == outputs[0], "--task mine --configfile mine.yaml: the same models and settings"
