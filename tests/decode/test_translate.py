"""docnmt.decode.translate: raw documents in, the workflow's translations out, layout kept, bad input named."""

import subprocess
import sys

import pytest

from helpers import REPO, tool_env
from docnmt.corpora.corpus import read_docids
from docnmt.decode import translate
from docnmt.preprocess.encode import TextPipeline
from docnmt.textio import InputError, read_lines

pytestmark = pytest.mark.workflow
N_DOCS = 8


def run(*args):
    return subprocess.run([sys.executable, "-m", *map(str, args)], capture_output=True, text=True, env=tool_env(),
                          cwd=REPO)


def demo_documents(workdir, n_docs=N_DOCS):
    """The first demo test documents: raw sentences, and the workflow's BPE lines of the same sentences."""
    ids = read_docids(workdir / "data/demo/corpus/test.docids")
    raw, bpe = read_lines(workdir / "data/demo/corpus/test.en"), read_lines(workdir / "data/demo/bpe/test.en")
    docs, order = {}, []
    for docid, r, b in zip(ids, raw, bpe):
        if docid not in docs:
            if len(order) == n_docs:
                break
            order.append(docid)
            docs[docid] = ([], [])
        docs[docid][0].append(r)
        docs[docid][1].append(b)
    return [(d, *docs[d]) for d in order]


def model_args(workdir, *levels):
    args = []
    for level in levels:
        args += [f"--{level}-model", workdir / f"results/demo/models/{level}/checkpoint_best.pt",
                 f"--{level}-data", workdir / f"data/demo/bin/{level}"]
    return args + ["--codes", workdir / "data/demo/bpe/codes", "--src-lang", "en", "--tgt-lang", "de"]


def test_the_text_pipeline_gives_the_workflows_bpe(demo_models):
    pipeline = TextPipeline("en", "de", "moses", str(demo_models / "data/demo/bpe/codes"))
    for _docid, raw, bpe in demo_documents(demo_models, 30):
        assert [pipeline.encode(line) for line in raw] == bpe


def test_translate_equals_the_decode_cli_and_keeps_the_documents(demo_models, tmp_path):
    """translate on the first demo test documents and the decode CLI on their BPE lines, both as subprocesses."""
    demo = demo_models
    docs = demo_documents(demo)
    (tmp_path / "in.txt").write_text("\n".join("".join(s + "\n" for s in raw) for _, raw, _ in docs))
    (tmp_path / "test.bpe.en").write_text("".join(b + "\n" for _, _, bpe in docs for b in bpe))
    (tmp_path / "test.docids").write_text("".join(d + "\n" for d, _, bpe in docs for _ in bpe))
    result = run("docnmt.decode.translate", "--input", tmp_path / "in.txt", "--output", tmp_path / "out.txt",
                 *model_args(demo, "document"))
    cli = run("docnmt.decode.cli", "--strategy", "doc-trans", "--doc-trans-mode", "sequential",
              "--model", demo / "results/demo/models/document/checkpoint_best.pt",
              "--data", demo / "data/demo/bin/document", "--src", tmp_path / "test.bpe.en",
              "--docids", tmp_path / "test.docids", "--tgt-lang", "de", "--output-bpe", tmp_path / "cli.bpe",
              "--output", tmp_path / "cli.txt", "--sidecar", tmp_path / "cli.json")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "doc-trans: 8 documents" in result.stdout and "sentences/s" in result.stdout
    assert "document-level model: batch 1," in result.stderr, "a progress line per search batch"
    assert cli.returncode == 0, cli.stderr[-3000:]
    out = (tmp_path / "out.txt").read_text().split("\n\n")
    assert [len(block.splitlines()) for block in out] == [len(raw) for _, raw, _ in docs], "the same documents"
    assert [line for block in out for line in block.splitlines()] == read_lines(tmp_path / "cli.txt")


def test_a_folder_of_documents_gives_a_folder_with_the_same_names_and_lines(demo_models, tmp_path):
    docs = demo_documents(demo_models, 3)
    (tmp_path / "in").mkdir()
    for n, (_, raw, _) in enumerate(docs):
        (tmp_path / "in" / f"talk{n}.txt").write_text("".join(s + "\n" for s in raw))
    (tmp_path / "in" / ".hidden").write_text("skipped\n")
    result = run("docnmt.decode.translate", "--input", tmp_path / "in", "--output", tmp_path / "out",
                 "--strategy", "2-pass", *model_args(demo_models, "sentence", "document"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["talk0.txt", "talk1.txt", "talk2.txt"]
    for n, (_, raw, _) in enumerate(docs):
        lines = read_lines(tmp_path / "out" / f"talk{n}.txt")
        assert len(lines) == len(raw) and all(lines)
    assert "sentence-level model: batch 1," in result.stderr and "document-level model: batch 1," in result.stderr


def test_a_line_longer_than_the_model_is_an_error_naming_it(demo_models, tmp_path):
    (tmp_path / "in.txt").write_text("A short one.\n" + "word " * 1100 + "\n")
    result = run("docnmt.decode.translate", "--input", tmp_path / "in.txt", "--output", tmp_path / "out.txt",
                 *model_args(demo_models, "document"))
    assert result.returncode == 1
    assert f"{tmp_path / 'in.txt'}:2: this sentence has" in result.stderr and "never truncated" in result.stderr
    assert not (tmp_path / "out.txt").exists()


def test_2_pass_without_the_sentence_model_is_a_usage_error(demo_models, tmp_path):
    (tmp_path / "in.txt").write_text("Hello.\n")
    result = run("docnmt.decode.translate", "--input", tmp_path / "in.txt", "--output", tmp_path / "out.txt",
                 "--strategy", "2-pass", *model_args(demo_models, "document"))
    assert result.returncode == 2 and "--strategy 2-pass needs --sentence-model and --sentence-data" in result.stderr


@pytest.mark.parametrize("text, message, line", [
    ("", "expected sentences to translate, found no text", None),
    ("\n\n", "expected sentences to translate, found no text", None),
    ("One.\n\n\nTwo.\n", "found an empty document", 3),
    ("\nOne.\n", "found an empty document", 1),
])
def test_bad_input_files_are_named_with_their_line(tmp_path, text, message, line):
    (tmp_path / "in.txt").write_text(text)
    with pytest.raises(InputError, match=message) as err:
        translate.read_documents(tmp_path / "in.txt")
    if line:
        assert f"in.txt:{line}:" in str(err.value)


def test_input_layouts_keep_documents_and_lines(tmp_path):
    (tmp_path / "in.txt").write_text("One.\nTwo.\n\nThree.\n\n")
    docs, layout = translate.read_documents(tmp_path / "in.txt")
    assert layout == "file" and [(d[1], d[2]) for d in docs] == [(["One.", "Two."], [1, 2]), (["Three."], [4])]
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a.txt").write_text("One.\n\nTwo.\n")
    with pytest.raises(InputError, match=r"a.txt:2: expected a sentence, found an empty line"):
        translate.read_documents(tmp_path / "folder")
    translate.write_documents(tmp_path / "out.txt", "file", docs, [["Eins.", "Zwei."], ["Drei."]])
    assert (tmp_path / "out.txt").read_text() == "Eins.\nZwei.\n\nDrei.\n"
    assert [(d[1]) for d in translate.read_documents(tmp_path / "out.txt")[0]] == [["Eins.", "Zwei."], ["Drei."]]


@pytest.mark.parametrize("written", [["--k=2", "--separator=<x>"], ["--k", "2", "--sep", "<x>"],
                                     ["--k=2", "--separ=<x>"]])
def test_an_option_given_with_task_keeps_its_value_however_it_is_written(tmp_path, written):
    """--task fills what the command line does not give: --k=2 and an abbreviated option are given (argparse's
    parsing decides, with defaults of None; matching exact tokens missed them)."""
    import yaml

    from docnmt.decode import translate

    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"task_settings": {"mine": {
        "src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": "corpus"},
        "models": {"k": 3, "separator": "<brk>", "bpe_codes": "none", "tokenize": "none",
                   "document": {"checkpoint": "doc.pt", "data": "bin"}}}}}))
    common = ["--input", "in.txt", "--output", "out.txt", "--task", "mine", "--configfile", str(tmp_path / "mine.yaml"),
              "--workdir", str(tmp_path)]
    _, args = translate.parse_arguments(common + written)
    assert (args.k, args.separator) == (2, "<x>")
    assert (args.document_model, args.tokenize, args.src_lang) == (tmp_path / "doc.pt", "none", "en"), "the task's"
    _, args = translate.parse_arguments(common)
    assert (args.k, args.separator) == (3, "<brk>"), "the task's values where none is given"
    _, args = translate.parse_arguments(["--input", "in.txt", "--output", "out.txt"])
    assert (args.k, args.separator, args.backend, args.context) == (3, "<sep>", "fairseq", "window"), "the defaults"
    assert set(translate.TASK_OPTIONS) >= set(translate.task_models("mine", tmp_path / "mine.yaml", tmp_path))
