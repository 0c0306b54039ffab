"""Checks of a model trained elsewhere (plain fairseq-train, its own dictionary and separator), and the Model
that reads it: each bad input is one error line naming the file."""

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, tool_env
from docnmt.decode import checks
from docnmt.decode.backends.fairseq.checks import check_model
from docnmt.textio import InputError

K = 3
SEPARATOR = "<brk>"

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"external"}


def toy_documents(seed=3, docs=40):
    """Documents of 3-7 sentences; each target token follows from a source token (w_i -> t_i)."""
    rng = random.Random(seed)
    out = []
    for _ in range(docs):
        doc = []
        for _ in range(rng.randint(3, 7)):
            src = [f"w{rng.randrange(25)}" for _ in range(rng.randint(2, 5))]
            doc.append((" ".join(src), " ".join("t" + w[1:] for w in src)))
        out.append(doc)
    return out


def windows(doc, k):
    """The k-sentence windows of a document, joined by the separator, as a user's own script would build them."""
    for i in range(len(doc)):
        part = doc[max(0, i - k + 1): i + 1]
        yield f" {SEPARATOR} ".join(s for s, _ in part), f" {SEPARATOR} ".join(t for _, t in part)


@pytest.fixture(scope="module")
def external(tmp_path_factory) -> Path:
    """A k=3 document-level model trained with plain fairseq-preprocess and fairseq-train (a few updates)."""
    root = tmp_path_factory.mktemp("external")
    docs = toy_documents()
    for split, part in (("train", docs[:32]), ("valid", docs[32:36]), ("test", docs[36:])):
        pairs = [w for doc in part for w in windows(doc, K)]
        (root / f"{split}.en").write_text("".join(s + "\n" for s, _ in pairs))
        (root / f"{split}.de").write_text("".join(t + "\n" for _, t in pairs))
    env = dict(tool_env(), TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1")
    run = lambda *args: subprocess.run([sys.executable, "-m", *args], env=env, cwd=root, capture_output=True,  # noqa: E731
                                       text=True, check=True)
    run("fairseq_cli.preprocess", "--source-lang", "en", "--target-lang", "de", "--joined-dictionary",
        "--trainpref", "train", "--validpref", "valid", "--testpref", "test", "--destdir", "data-bin", "--workers", "1")
    run("fairseq_cli.train", "data-bin", "--arch", "transformer", "--encoder-layers", "1", "--decoder-layers", "1",
        "--encoder-embed-dim", "16", "--decoder-embed-dim", "16", "--encoder-ffn-embed-dim", "32",
        "--decoder-ffn-embed-dim", "32", "--encoder-attention-heads", "2", "--decoder-attention-heads", "2",
        "--share-all-embeddings", "--optimizer", "adam", "--lr", "0.001", "--max-tokens", "2000", "--max-update", "3",
        "--save-dir", "ck", "--no-epoch-checkpoints", "--cpu", "--criterion", "label_smoothed_cross_entropy")
    (root / "text.en").write_text("".join(s + "\n" for doc in docs for s, _ in doc))
    return root


def test_a_plain_fairseq_model_passes_with_its_own_separator_and_k(external):
    report = check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", SEPARATOR, K)
    assert (report["arch"], report["src"], report["tgt"], report["separator"], report["k"]) == \
        ("transformer", "en", "de", SEPARATOR, K)
    assert 1.0 < report["separators_per_training_example"] <= K - 1


def test_a_dictionary_without_the_separator_is_named(external):
    with pytest.raises(InputError, match=r"dict.en.txt: expected the separator token '<sep>' of the document-level "
                                         r"model, found none"):
        check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", "<sep>", K)


def test_k_missing_or_smaller_than_the_training_windows_is_an_error(external):
    with pytest.raises(InputError, match="expected the window size k"):
        check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", SEPARATOR, None)
    with pytest.raises(InputError, match=r"dict.de.txt: the training data has 1\.\d\d separators per example, more "
                                         r"than a 2-sentence window holds"):
        check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", SEPARATOR, 2)


def test_a_k_larger_than_the_training_windows_is_one_line_naming_the_model(external, capsys):
    """The training windows hold at most K sentences: K+1 is more context than the model ever saw."""
    report = check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", SEPARATOR, K)
    assert report["training_windows"] == {"split": str(external / "data-bin/train.en-de"), "largest": K}
    with pytest.raises(SystemExit):
        checks.main(["--model", str(external / "ck/checkpoint_best.pt"), "--data", str(external / "data-bin"),
                     "--level", "document", "--separator", SEPARATOR, "--k", str(K + 1)])
    errors = capsys.readouterr().err.splitlines()
    assert errors == [f"error: {external / 'ck/checkpoint_best.pt'}: k=4 is larger than the model was trained with: "
                      f"its training data ({external / 'data-bin/train.en-de'}.*) has windows of at most 3 sentences "
                      "(2 separators in an example); set k to 3"], errors


def test_without_a_train_split_the_k_check_reads_the_data_the_checkpoint_records(external, tmp_path):
    """A data folder with the dictionaries alone: the windows come from the checkpoint's task.data (fairseq records
    the folder it trained on); where that folder is gone too, nothing tells k, and the check passes."""
    import torch

    dicts = tmp_path / "dicts"
    dicts.mkdir()
    for lang in ("en", "de"):
        shutil.copy(external / f"data-bin/dict.{lang}.txt", dicts)
    state = torch.load(external / "ck/checkpoint_best.pt", map_location="cpu", weights_only=False)
    task = state["cfg"]["task"]  # as fairseq-train --source-lang en --target-lang de DATA records it
    for name, folder in (("recorded.pt", external / "data-bin"), ("moved.pt", tmp_path / "gone")):
        for key, value in (("data", str(folder)), ("source_lang", "en"), ("target_lang", "de")):
            task[key] = value
        torch.save(state, tmp_path / name)
    with pytest.raises(InputError, match=r"recorded.pt: k=5 is larger than the model was trained with: its training "
                                         r"data \(.*data-bin/train.en-de.\*\) has windows of at most 3 sentences"):
        check_model(tmp_path / "recorded.pt", dicts, "document", SEPARATOR, K + 2)
    report = check_model(tmp_path / "moved.pt", dicts, "document", SEPARATOR, K + 2)
    assert report["training_windows"] is None and report["separators_per_training_example"] is None


def test_a_dictionary_of_another_size_than_the_embeddings_is_named(external, tmp_path):
    data = tmp_path / "data-bin"
    shutil.copytree(external / "data-bin", data)
    with open(data / "dict.en.txt", "a") as handle:
        handle.write("extra1 1\nextra2 1\n")
    with pytest.raises(InputError, match=r"dict.en.txt: has \d+ entries .* but the checkpoint's encoder embeddings"):
        check_model(external / "ck/checkpoint_best.pt", data, "document", SEPARATOR, K)


def test_a_corrupt_checkpoint_and_another_architecture_are_named(external, tmp_path):
    import torch

    (tmp_path / "broken.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(InputError, match="broken.pt: expected a fairseq checkpoint, could not load it"):
        check_model(tmp_path / "broken.pt", external / "data-bin", "document", SEPARATOR, K)
    state = torch.load(external / "ck/checkpoint_best.pt", map_location="cpu", weights_only=False)
    model_cfg = state["cfg"]["model"]
    if isinstance(model_cfg, dict):
        model_cfg["_name"] = "lstm"
    else:
        model_cfg._name = "lstm"
        model_cfg.arch = "lstm"
    torch.save(state, tmp_path / "lstm.pt")
    with pytest.raises(InputError, match=r"lstm.pt: architecture 'lstm' \(lstm\) is not supported: the search runs "
                                         r"fairseq encoder-decoder transformers, --arch one of transformer, "):
        check_model(tmp_path / "lstm.pt", external / "data-bin", "document", SEPARATOR, K)


def test_bpe_codes_that_do_not_fit_the_dictionary_report_the_share(external, tmp_path):
    from docnmt.preprocess import bpe

    (tmp_path / "own.txt").write_text("".join(f"w{i} t{i}\n" for i in range(25)) * 4)
    bpe.learn([tmp_path / "own.txt"], tmp_path / "fits.codes", merges=60, min_frequency=1)
    report = check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", SEPARATOR, K,
                                tmp_path / "fits.codes", [external / "text.en"])
    assert report["bpe"]["unknown"] == 0 and report["bpe"]["units"] > 100
    (tmp_path / "other.txt").write_text("zebra quartz\n" * 10)
    bpe.learn([tmp_path / "other.txt"], tmp_path / "other.codes", merges=5, min_frequency=1)
    with pytest.raises(InputError, match=r"other.codes: 100.0% of the BPE units of the sample .* are not in .*dict.de.txt"):
        check_model(external / "ck/checkpoint_best.pt", external / "data-bin", "document", SEPARATOR, K,
                           tmp_path / "other.codes", [external / "text.en"])


def test_the_model_reads_and_writes_sep_for_its_own_separator(external):
    from docnmt import SEP
    from docnmt.decode.backends.fairseq.model import Model

    model = Model(external / "ck/checkpoint_best.pt", external / "data-bin", device="cpu", separator=SEPARATOR)
    ids = model.encode(f"t1 t2 {SEP} t3")
    assert ids[2] == model.dict.index(SEPARATOR) == model.sep and model.dict.unk() not in ids
    assert model.decode(ids) == f"t1 t2 {SEP} t3"


def test_the_cli_prints_one_line_naming_the_file(external):
    result = subprocess.run([sys.executable, "-m", "docnmt.decode.checks", "--model",
                             str(external / "ck/checkpoint_best.pt"), "--data", str(external / "data-bin"),
                             "--level", "document", "--k", str(K)], capture_output=True, text=True, env=tool_env(),
                            cwd=REPO)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "dict.en.txt: expected the separator token '<sep>'" in errors[0]


def test_translate_and_the_decode_cli_agree_on_the_plain_fairseq_model(external, tmp_path):
    """The <brk> model through translate (raw text, no tokenizer or BPE) and through docnmt.decode.cli."""
    docs = toy_documents(seed=9, docs=4)
    (tmp_path / "in").mkdir()  # a folder: the barely trained model's empty outputs cannot blur the documents
    for n, doc in enumerate(docs):
        (tmp_path / "in" / f"d{n}.txt").write_text("".join(s + "\n" for s, _ in doc))
    (tmp_path / "src").write_text("".join(s + "\n" for doc in docs for s, _ in doc))
    (tmp_path / "ids").write_text("".join(f"d{n}\n" for n, doc in enumerate(docs) for _ in doc))
    model = ["--separator", SEPARATOR, "--k", str(K), "--beam", "2"]
    translated = subprocess.run(
        [sys.executable, "-m", "docnmt.decode.translate", "--input", str(tmp_path / "in"), "--output",
         str(tmp_path / "out"), "--src-lang", "en", "--tgt-lang", "de", "--tokenize", "none", "--codes", "none",
         "--strategy", "last-sentence", "--document-model", str(external / "ck/checkpoint_best.pt"),
         "--document-data", str(external / "data-bin"), *model], capture_output=True, text=True, env=tool_env(), cwd=REPO)
    assert translated.returncode == 0, translated.stderr[-3000:]
    decoded = subprocess.run(
        [sys.executable, "-m", "docnmt.decode.cli", "--strategy", "last-sentence", "--model",
         str(external / "ck/checkpoint_best.pt"), "--data", str(external / "data-bin"), "--src", str(tmp_path / "src"),
         "--docids", str(tmp_path / "ids"), "--tgt-lang", "de", "--output-bpe", str(tmp_path / "cli.bpe"),
         "--output", str(tmp_path / "cli.txt"), "--sidecar", str(tmp_path / "cli.json"), *model],
        capture_output=True, text=True, env=tool_env(), cwd=REPO)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    blocks = [(tmp_path / "out" / f"d{n}.txt").read_text().split("\n")[:-1] for n in range(len(docs))]
    assert [len(b) for b in blocks] == [len(doc) for doc in docs]
    cli = (tmp_path / "cli.bpe").read_text().split("\n")[:-1]
    assert [line for b in blocks for line in b] == cli
    assert not any(SEPARATOR in line or "<sep>" in line for line in cli), "the separator never reaches the output"


def test_translate_takes_a_tasks_models_from_the_config(external, tmp_path):
    import yaml

    from docnmt.decode import translate

    (tmp_path / "mine.yaml").write_text(yaml.safe_dump({"task_settings": {"mine": {
        "src": "en", "tgt": "de", "corpus": {"type": "prepared", "dir": "corpus"},
        "models": {"k": K, "separator": SEPARATOR, "bpe_codes": "none", "tokenize": "none",
                   "document": {"checkpoint": "ck/checkpoint_best.pt", "data": "data-bin"}}}}}))
    options = translate.task_models("mine", tmp_path / "mine.yaml", external)
    assert options == {"backend": "fairseq", "src_lang": "en", "tgt_lang": "de",
                       "document_model": external / "ck/checkpoint_best.pt",
                       "document_data": external / "data-bin", "k": K, "separator": SEPARATOR, "tokenize": "none",
                       "codes": "none", "context": "window", "engine_args": {}}
    own = translate.task_models("demo", None, tmp_path)
    assert own["document_model"] == tmp_path / "results/demo/models/document/checkpoint_best.pt"
    assert (own["codes"], own["separator"], own["k"]) == (str(tmp_path / "data/demo/bpe/codes"), "<sep>", 3)
    with pytest.raises(InputError, match="unknown task 'nope'"):
        translate.task_models("nope", tmp_path / "mine.yaml", external)
    (tmp_path / "in.txt").write_text("w1 w2\nw3 w4\n\nw5\n")
    common = ["--input", str(tmp_path / "in.txt"), "--strategy", "last-sentence", "--beam", "2"]
    assert translate.main(common + ["--output", str(tmp_path / "a.txt"), "--task", "mine", "--configfile",
                                    str(tmp_path / "mine.yaml"), "--workdir", str(external)]) == 0
    assert translate.main(common + ["--output", str(tmp_path / "b.txt"), "--src-lang", "en", "--tgt-lang", "de",
                                    "--document-model", str(external / "ck/checkpoint_best.pt"), "--document-data",
                                    str(external / "data-bin"), "--separator", SEPARATOR, "--k", str(K),
                                    "--tokenize", "none", "--codes", "none"]) == 0
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.txt").read_text()


def test_the_cli_tokenizes_the_sample_in_its_language_and_takes_the_unknown_share_it_is_given(external, tmp_path,
                                                                                              capsys):
    """--sample-tokenize moses --sample-lang fr: the sample is tokenized by the French rules (``l'w3`` -> ``l' w3``,
    English: ``l 'w3``), so the report's BPE units are those of check_codes with French tokenization, not English;
    their unknown share (the elisions) is above the default --max-unknown of 5%, so the check passes only with
    --max-unknown 0.5, and fails without it, naming the codes."""
    from docnmt.decode.backends.fairseq.checks import check_codes, load_dictionary
    from docnmt.preprocess import bpe
    from docnmt.preprocess.tokenize import tokenize

    (tmp_path / "own.txt").write_text("".join(f"w{i} t{i}\n" for i in range(25)) * 4)
    bpe.learn([tmp_path / "own.txt"], tmp_path / "codes", merges=60, min_frequency=1)
    (tmp_path / "sample.txt").write_text("l'w3 w4 w5 w6 w7\nqu'w8 w9 w10 w11 w12\n" * 3)
    command = ["--model", str(external / "ck/checkpoint_best.pt"), "--data", str(external / "data-bin"), "--level",
               "document", "--separator", SEPARATOR, "--k", str(K), "--codes", str(tmp_path / "codes"),
               "--sample", str(tmp_path / "sample.txt"), "--sample-tokenize", "moses", "--sample-lang", "fr"]
    assert checks.main(command + ["--max-unknown", "0.5", "--output", str(tmp_path / "check.json")]) == 0
    report = json.loads((tmp_path / "check.json").read_text())["bpe"]
    dictionary = load_dictionary(external / "data-bin/dict.de.txt")

    def codes_check(lang):
        return check_codes(tmp_path / "codes", [tmp_path / "sample.txt"], dictionary, external / "data-bin/dict.de.txt",
                           1.0, tokenize=lambda line: tokenize(line, lang))

    french, english = codes_check("fr"), codes_check("en")
    assert report == french and "l@@" in report["unknown_first"]  # l' w3: the elision's letter joined to its '
    assert english["unknown_first"] != french["unknown_first"] and "l" in english["unknown_first"]  # l 'w3
    assert 0.05 < report["unknown_share"] <= 0.5
    assert "sample units not in the dictionary: OK" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        checks.main(command)
    assert stop.value.code == 1
    assert f"{tmp_path / 'codes'}: {report['unknown_share']:.1%} of the BPE units of the sample" in \
        capsys.readouterr().err
