"""docnmt.decode.translate: raw documents in, the workflow's translations out, layout kept, bad input named."""

import subprocess
import sys

import pytest

from helpers import REPO, shell_commands, tool_env
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
    """translate on the first demo test documents and the decode CLI on their BPE lines, both as subprocesses; and
    docs/own-models.md's `--task demo` command ("Checks and translation", after `make demo`; the block's other
    commands run in tests/test_external_models.py), as written, through a shell, in a folder laid out as a finished
    demo (its models, binarized data and BPE codes linked from the demo's): the same translations, from the task's
    models and settings."""
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
    (command,) = [c for c in shell_commands(REPO / "docs/own-models.md", "## Checks and translation")
                  if "--task demo" in c]
    work = tmp_path / "after make demo"
    for path in ("results/demo/models", "data/demo/bin", "data/demo/bpe"):
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).symlink_to(demo / path, target_is_directory=True)
    (work / "talks.txt").write_text((tmp_path / "in.txt").read_text())
    result = subprocess.run(command, shell=True, cwd=work, env=tool_env(), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    assert f"doc-trans: {N_DOCS} documents" in result.stdout, result.stdout
    assert (work / "talks.de.txt").read_text() == (tmp_path / "out.txt").read_text()


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
    assert set(translate.task_options()) >= set(translate.task_models("mine", tmp_path / "mine.yaml", tmp_path))


# ---- the search's options, on the toy model (tests/toymodel.py) ---------------------------------------------------
#: Three documents of the toy task's words (s_n -> t_n, reversed), of 3, 2 and 3 sentences.
TOY_DOCS = [["s3 s7 s11", "s1 s2", "s5 s9 s4 s8"], ["s6 s10", "s12 s0 s13"],
            ["s2 s2 s14", "s15 s16 s17 s18", "s19 s20"]]


def toy_input(tmp_path):
    """TOY_DOCS in the file layout, and its lines as the documents the strategies read (one sentence a line)."""
    from docnmt.decode.documents import Document

    (tmp_path / "in.txt").write_text("\n".join("".join(s + "\n" for s in doc) for doc in TOY_DOCS), encoding="utf-8")
    starts = [sum(map(len, TOY_DOCS[:n])) for n in range(len(TOY_DOCS))]
    return tmp_path / "in.txt", lambda: [Document(f"doc-{n + 1}", list(range(start, start + len(doc))), list(doc))
                                         for n, (start, doc) in enumerate(zip(starts, TOY_DOCS))]


def toy_model_args(toy, *levels):
    """translate's options for the toy model as the model of each of ``levels`` (k 2, beam 2, 20 tokens, on CPU)."""
    root, checkpoint, _ = toy
    args = ["--src-lang", "en", "--tgt-lang", "de", "--codes", "none", "--tokenize", "none", "--device", "cpu",
            "--k", "2", "--beam", "2", "--max-len-b", "20"]
    for level in levels:
        args += [f"--{level}-model", str(checkpoint), f"--{level}-data", str(root / "bin")]
    return args


def batch_sizes(stderr: str, model: str) -> list[int]:
    """The requests of each search batch of ``model`` (``document-level model`` or ``sentence-level model``), from
    translate's progress lines (one a batch, each with the requests searched so far)."""
    import re

    searched = [int(n) for n in re.findall(rf"^{model}: batch \d+, (\d+) requests searched", stderr, re.M)]
    return [now - before for before, now in zip([0] + searched, searched)]


def output_documents(path) -> list[list[str]]:
    return [block.splitlines() for block in path.read_text(encoding="utf-8").split("\n\n")]


def test_translate_searches_with_its_h_lenpen_batch_size_and_dtype(toy, tmp_path, capsys, monkeypatch):
    """doc-trans-beam with --h 2, --lenpen 5, --batch-size 2 and --dtype bfloat16: the translations are those of the
    Python API with the same settings (a bfloat16 model, make_searcher's lenpen and batch size, the Decoder's h), and
    lenpen 5 gives other translations than lenpen 1; the progress lines show batches of at most 2 requests and as
    many requests as h=2 contexts need (more than h=1 would search); the model searched is bfloat16."""
    import torch

    from helpers import captured

    from docnmt.decode.backends import make_searcher
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.strategies import REGISTRY, Decoder

    root, checkpoint, _ = toy
    source, documents = toy_input(tmp_path)
    loaded = captured(monkeypatch, "docnmt.decode.backends.load_model")
    assert translate.main(["--input", str(source), "--output", str(tmp_path / "out.txt"), "--strategy",
                           "doc-trans-beam", "--h", "2", "--lenpen", "5", "--batch-size", "2", "--dtype", "bfloat16",
                           *toy_model_args(toy, "document")]) == 0
    stderr = capsys.readouterr().err
    (model,) = loaded
    assert model.dtype == "bfloat16" and next(model.model.parameters()).dtype == torch.bfloat16

    api = Model(checkpoint, root / "bin", device="cpu", dtype="bfloat16")

    def decode(h, lenpen, batch_size):
        decoder = Decoder(make_searcher(api, beam=2, lenpen=lenpen, batch_size=batch_size, max_len=20), k=2, h=h)
        return REGISTRY["doc-trans-beam"](decoder, documents()), decoder.stats.requests

    expected, requests = decode(h=2, lenpen=5.0, batch_size=2)
    assert output_documents(tmp_path / "out.txt") == expected
    assert decode(h=2, lenpen=1.0, batch_size=2)[0] != expected, "lenpen 5 prefers longer translations"
    sizes = batch_sizes(stderr, "document-level model")
    assert max(sizes) == 2 and sum(sizes) == requests
    assert requests > decode(h=1, lenpen=5.0, batch_size=2)[1] > 0, "h=2 searches two contexts a sentence"


def test_parallel_doc_trans_translates_as_sequential_and_max_tokens_limits_its_batches(toy, tmp_path, capsys):
    """--doc-trans-mode parallel (round 1's contexts guessed by the document model at beam 1, no sentence-level model
    needed) gives sequential doc-trans's translations, as the docs say; with --max-tokens 50 (beam 2 x (source +
    context + 20 tokens) is more than 25 positions a request) every batch of the search and of its guess holds one
    request (its guess's, at beam 1, two), where the default batches hold several."""
    source, _ = toy_input(tmp_path)
    assert translate.main(["--input", str(source), "--output", str(tmp_path / "sequential.txt"),
                           *toy_model_args(toy, "document")]) == 0
    default = capsys.readouterr().err
    assert translate.main(["--input", str(source), "--output", str(tmp_path / "parallel.txt"), "--doc-trans-mode",
                           "parallel", "--max-tokens", "50", *toy_model_args(toy, "document")]) == 0
    limited = capsys.readouterr().err
    assert output_documents(tmp_path / "parallel.txt") == output_documents(tmp_path / "sequential.txt")
    assert [len(doc) for doc in output_documents(tmp_path / "parallel.txt")] == [3, 2, 3]
    assert max(batch_sizes(default, "document-level model")) == len(TOY_DOCS), "a position of every document at once"
    sizes = batch_sizes(limited, "document-level model")
    assert sizes and set(sizes) == {1}, sizes
    guess = batch_sizes(limited, "document-level model, guess")  # beam 1: half the positions a request of beam 2
    assert sum(guess) == sum(map(len, TOY_DOCS)) and max(guess) <= 2 < max(batch_sizes(default, "document-level model"))
    assert not batch_sizes(limited, "sentence-level model"), "no sentence-level first pass"


@pytest.mark.parametrize("folders, share", [(("a", "b"), 0.4), (("a", "a"), 0.8)])
def test_two_vllm_folders_share_the_memory_their_engines_reserve(folders, share, capsys):
    """Issue 57, fault 8: docnmt-translate with two vLLM folders started two engines, each reserving the whole
    gpu_memory_utilization, so that on a GPU the second finds the memory taken. Now each of n engines gets 1/n of
    it (one folder for both levels is one engine: nothing changes)."""
    from types import SimpleNamespace

    from docnmt.decode.backend import backend

    args = SimpleNamespace(engine_args={"gpu_memory_utilization": 0.8, "max_model_len": 512},
                           sentence_model=folders[0], document_model=folders[1])
    engine = translate.shared_engine_args(args, backend("vllm"), {"sentence", "document"})
    assert engine == {"gpu_memory_utilization": share, "max_model_len": 512}
    said = capsys.readouterr().err
    assert ("2 vllm models in this process: each engine takes gpu_memory_utilization=0.4" in said) == (share == 0.4)
    assert translate.shared_engine_args(args, backend("causal-lm"), {"sentence", "document"}) == args.engine_args
