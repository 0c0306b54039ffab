"""The transformers backend (docnmt.decode.backends.transformers.model) on a tiny Marian model built here (tests/hfmodel.py): its search
equals transformers' own generate(), with and without a forced target context; the strategies' equalities hold
on it; its checks fail with one clear line."""

from pathlib import Path

import pytest


from docnmt.decode.requests import Request
from docnmt.decode.strategies import REGISTRY, Decoder
from docnmt.textio import InputError

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

MAX_NEW = 60

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"m2m100", "marian"}


@pytest.fixture(scope="module")
def marian(hf_marian):
    """The tiny Marian model (conftest ``hf_marian``), loaded."""
    from docnmt.decode.backends.transformers.model import HFModel

    return HFModel(hf_marian, separator="<brk>", device="cpu")


@pytest.fixture(scope="module")
def sample_docs():
    import hfmodel

    return hfmodel.demo_documents()[1]


def generate(model, sources, beam, lenpen, early_stopping, prompts=None):
    """transformers' generate() on one batch of texts (:func:`generate_ids`)."""
    return generate_ids(model, model.tokenizer(sources, return_tensors="pt", padding=True), beam, lenpen,
                        early_stopping, prompts)


def encoded_ids(source: list[int]) -> dict:
    """generate()'s inputs for one source of token ids."""
    return {"input_ids": torch.tensor([source]), "attention_mask": torch.ones(1, len(source), dtype=torch.long)}


def generate_ids(model, encoded, beam, lenpen, early_stopping, prompts=None):
    """transformers' generate() on one batch of encoded sources, after the decoder prompts ``prompts`` (None: the
    start token alone): (tokens after the prompt, without </s>; score) per hypothesis, the n-best of each row."""
    more = {} if prompts is None else {"decoder_input_ids": torch.tensor(prompts)}
    with torch.no_grad():
        out = model.net.generate(**encoded, **more, num_beams=beam, length_penalty=lenpen,
                                 early_stopping=early_stopping, max_new_tokens=MAX_NEW, num_return_sequences=beam,
                                 output_scores=True, return_dict_in_generate=True)
    start = 1 if prompts is None else len(prompts[0])
    hyps = []
    for row in range(encoded["input_ids"].size(0)):
        nbest = []
        for b in range(beam):
            tokens = out.sequences[row * beam + b].tolist()[start:]
            while tokens and tokens[-1] in (model.eos, model.pad):  # </s> and generate's fill
                tokens = tokens[:-1]
            nbest.append((tokens, float(out.sequences_scores[row * beam + b])))
        hyps.append(nbest)
    return hyps


def ours(searcher, requests):
    return [[(h.tokens, h.score) for h in nbest] for nbest in searcher.search(requests)]


def same(a, b, tolerance=1e-4) -> bool:
    return all(len(x) == len(y) and all(tx == ty and abs(sx - sy) < tolerance for (tx, sx), (ty, sy) in zip(x, y))
               for x, y in zip(a, b)) and len(a) == len(b)


@pytest.mark.parametrize("beam,lenpen,early_stopping", [(4, 1.0, True), (4, 1.0, False), (3, 0.6, "never")])
def test_empty_context_search_equals_generate_on_every_demo_test_sentence(marian, sample_docs, beam, lenpen,
                                                                         early_stopping):
    from docnmt.decode.backends.transformers.model import HFSearcher

    sentences = [s for doc in sample_docs for s in doc.src]
    assert len(sentences) >= 30
    searcher = HFSearcher(marian, beam=beam, lenpen=lenpen, early_stopping=early_stopping, max_new_tokens=MAX_NEW,
                          batch_size=16)
    mine = ours(searcher, [Request(marian.encode(s, source=True)) for s in sentences])
    theirs = [h for i in range(0, len(sentences), 16)
              for h in generate(marian, sentences[i:i + 16], beam, lenpen, early_stopping)]
    assert same(mine, theirs), [n for n, (a, b) in enumerate(zip(mine, theirs)) if a != b][:5]


def test_beam_1_is_generates_greedy_search_with_and_without_a_forced_context(marian, sample_docs):
    """generate(num_beams=1) is greedy search (GenerationMixin._sample), not a beam search of one beam: so is the
    searcher's beam 1, on every demo test sentence, and after a target context."""
    from docnmt.decode.backends.transformers.model import HFSearcher

    def greedy(encoded, prompts=None):
        more = {} if prompts is None else {"decoder_input_ids": torch.tensor(prompts)}
        with torch.no_grad():
            rows = model.net.generate(**encoded, **more, num_beams=1, do_sample=False, max_new_tokens=MAX_NEW).tolist()
        start = len(model.prompt) if prompts is None else len(prompts[0])
        return [[t for t in row[start:] if t not in (model.eos, model.pad)] for row in rows]

    model = marian
    searcher = HFSearcher(model, beam=1, max_new_tokens=MAX_NEW, batch_size=16)
    sentences = [s for doc in sample_docs for s in doc.src]
    mine = [nbest[0].tokens for nbest in searcher.search([Request(model.encode(s, source=True)) for s in sentences])]
    assert mine == [h for i in range(0, len(sentences), 16)
                    for h in greedy(model.tokenizer(sentences[i:i + 16], return_tensors="pt", padding=True))]
    doc = sample_docs[0]
    for i in range(2, len(doc)):
        source = model.encode(" <sep> ".join(doc.src[i - 2:i + 1]), source=True)
        context = model.encode(" <sep> ".join(doc.tgt[i - 2:i]) + " <sep>")[:-1]
        (best,), = searcher.search([Request(source, context)])
        assert [best.tokens] == greedy(encoded_ids(source), prompts=[model.prompt + context]), i


def test_forced_context_search_equals_generate_with_decoder_input_ids(marian, sample_docs):
    from docnmt.decode.backends.transformers.model import HFSearcher

    searcher = HFSearcher(marian, beam=4, lenpen=1.0, early_stopping=True, max_new_tokens=MAX_NEW)
    checked = 0
    for doc in sample_docs:
        for i in range(2, len(doc)):
            source = marian.encode(" <sep> ".join(doc.src[i - 2:i + 1]), source=True)
            context = marian.encode(" <sep> ".join(doc.tgt[i - 2:i]) + " <sep>")[:-1]
            mine = ours(searcher, [Request(source, context)])
            text = marian.tokenizer.decode(source[:-1])
            theirs = generate_ids(marian, encoded_ids(source), 4, 1.0, True, prompts=[marian.prompt + context])
            assert same(mine, theirs), (doc.docid, i, text)
            checked += 1
    assert checked >= 10


def test_forced_scoring_gives_the_searchs_own_log_probability(marian, sample_docs):
    from docnmt.decode.backends.transformers.model import HFSearcher

    searcher = HFSearcher(marian, beam=4, early_stopping=True, max_new_tokens=MAX_NEW)
    doc = sample_docs[0]
    requests = [Request(marian.encode(" <sep> ".join(doc.src[:2]), source=True),
                        marian.encode(doc.tgt[0] + " <sep>")[:-1]),
                Request(marian.encode(doc.src[0], source=True))]
    best = [nbest[0] for nbest in searcher.search(requests)]
    scored = searcher.score_forced(requests, [h.tokens for h in best])
    for hyp, score in zip(best, scored):
        assert score.tokens == len(hyp.tokens) + 1
        assert score.logprob == pytest.approx(hyp.logprob, abs=1e-4)


def decode(model, strategy, docs, h=12, mode="sequential"):
    from docnmt.decode.backends.transformers.model import HFSearcher

    searcher = HFSearcher(model, beam=3, early_stopping=True, max_new_tokens=MAX_NEW)
    decoder = Decoder(searcher, k=3, h=h, doc_trans_mode=mode)
    out = REGISTRY[strategy](decoder, docs)
    assert [len(o) for o in out] == [len(d) for d in docs]
    return out, decoder


def documents(sample_docs, first_pass=None):
    from docnmt.decode.documents import group

    src = [s for d in sample_docs for s in d.src]
    ref = [t for d in sample_docs for t in d.tgt]
    ids = [d.docid for d in sample_docs for _ in d.src]
    return group(src, ids, ref, first_pass)


def short_documents(sample_docs, count: int, sentences: int):
    """The first ``count`` test documents (:func:`documents`), each cut to its first ``sentences`` sentences."""
    docs = documents(sample_docs[:count])
    for d in docs:
        d.src[:], d.ref[:], d.lines[:] = d.src[:sentences], d.ref[:sentences], d.lines[:sentences]
    return docs


def write_test_set(docs, folder: Path) -> dict[str, Path]:
    """The documents as the CLIs read a test set: test.src, test.ref and test.docids, a line per sentence."""
    files = {}
    for name, lines in (("src", [s for d in docs for s in d.src]), ("ref", [s for d in docs for s in d.ref]),
                        ("docids", [d.docid for d in docs for _ in d.src])):
        files[name] = folder / f"test.{name}"
        files[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return files


def test_doc_trans_beam_with_h1_equals_doc_trans(marian, sample_docs):
    docs = documents(sample_docs)
    assert decode(marian, "doc-trans-beam", docs, h=1)[0] == decode(marian, "doc-trans", docs)[0]


def test_parallel_doc_trans_equals_sequential(marian, sample_docs):
    first = [s for doc in decode(marian, "sentence-level", documents(sample_docs))[0] for s in doc]
    docs = documents(sample_docs, first_pass=first)
    sequential = decode(marian, "doc-trans", docs)[0]
    parallel, decoder = decode(marian, "doc-trans", docs, mode="parallel")
    assert parallel == sequential and decoder.stats.converged


def test_every_strategy_translates_text_in_and_text_out(marian, sample_docs):
    docs = documents(sample_docs[:2])
    for strategy in ("no-context", "full-segment", "last-sentence", "first-sentence", "cheating", "doc-trans"):
        out, _ = decode(marian, strategy, docs)
        assert all(isinstance(s, str) and "<brk>" not in s and "</s>" not in s for doc in out for s in doc), strategy


def test_a_sentence_longer_than_the_positions_is_an_error_naming_the_request(marian):
    from docnmt.decode.backends.transformers.model import HFSearcher

    long = marian.encode(" ".join(["Hallo"] * (marian.max_positions + 5)), source=True)
    with pytest.raises(InputError, match=r"request 1: source too long: .* max source positions are 128"):
        HFSearcher(marian).search([Request(long)])


def test_a_context_longer_than_the_positions_is_an_error_naming_the_request(marian):
    from docnmt.decode.backends.transformers.model import HFSearcher

    source = marian.encode("Hallo.", source=True)
    context = marian.encode(" ".join(["Hallo"] * marian.max_positions))[:-1]
    with pytest.raises(InputError, match=r"request 2: prefix too long: \d+ tokens, at most 126 fit the model's max "
                                         r"positions 128 with </s>"):
        HFSearcher(marian).search([Request(source), Request(source, context)])


def test_no_separator_token_is_an_error_that_says_how_to_add_one(hf_marian):
    from docnmt.decode.backends.transformers.model import HFModel

    model = HFModel(hf_marian, separator="<sep>", device="cpu")
    with pytest.raises(InputError) as error:
        model.check_separator()
    message = str(error.value)
    assert str(hf_marian) in message and "'<sep>' to be a single token of the tokenizer" in message
    assert "add_special_tokens" in message and "resize_token_embeddings" in message


def test_a_decoder_only_model_is_refused_naming_the_folder(tmp_path):
    from transformers import GPT2Config

    from docnmt.decode.backends.transformers.model import HFModel

    GPT2Config(n_layer=1, n_embd=8, n_head=1, vocab_size=10).save_pretrained(tmp_path)
    with pytest.raises(InputError, match="expected an encoder-decoder model, found 'gpt2'") as error:
        HFModel(tmp_path)
    assert str(tmp_path) in str(error.value)


def test_a_folder_without_config_is_refused(tmp_path):
    from docnmt.decode.backends.transformers.model import HFModel

    with pytest.raises(InputError, match="expected a transformers model folder"):
        HFModel(tmp_path)


@pytest.fixture(scope="module")
def m2m100(hf_m2m100):
    """The tiny M2M100 model (conftest's hf_m2m100), loaded."""
    from docnmt.decode.backends.transformers.model import HFModel

    return HFModel(hf_m2m100, separator="<brk>", src_lang="en", tgt_lang="de", device="cpu")


def test_a_language_token_model_starts_the_decoder_with_its_target_language(m2m100):
    tokens = m2m100.tokenizer.convert_ids_to_tokens
    assert tokens(m2m100.prompt) == ["</s>", "__de__"]
    source = m2m100.encode("Hello. <sep> How are you?", source=True)
    assert tokens(source)[0] == "__en__" and tokens(source)[-1] == "</s>" and "<brk>" in tokens(source)
    assert "__de__" not in tokens(m2m100.encode("Hallo. <sep> Wie geht es?"))


def test_a_language_token_model_searches_as_generate_after_its_prompt(m2m100, sample_docs):
    """With and without a target context: generate(decoder_input_ids=[</s>, __de__, context...])."""
    from docnmt.decode.backends.transformers.model import HFSearcher

    searcher = HFSearcher(m2m100, beam=3, lenpen=1.0, early_stopping=True, max_new_tokens=MAX_NEW)
    doc = sample_docs[1]
    sentences = doc.src[:6]
    mine = ours(searcher, [Request(m2m100.encode(s, source=True)) for s in sentences])
    theirs = generate(m2m100, sentences, 3, 1.0, True, prompts=[m2m100.prompt] * len(sentences))
    assert same(mine, theirs)
    source = m2m100.encode(" <sep> ".join(doc.src[:2]), source=True)
    context = m2m100.encode(doc.tgt[0] + " <sep>")[:-1]
    mine = ours(searcher, [Request(source, context)])
    text = m2m100.tokenizer.decode(source, skip_special_tokens=True)
    theirs = generate_ids(m2m100, encoded_ids(source), 3, 1.0, True, prompts=[m2m100.prompt + context])
    assert same(mine, theirs), text


def test_missing_or_unknown_language_codes_are_errors_naming_the_folder(m2m100):
    from docnmt.decode.backends.transformers.model import HFModel

    with pytest.raises(InputError, match="expected the target language code: M2M100Tokenizer marks languages"):
        HFModel(m2m100.folder, separator="<brk>", src_lang="en")
    with pytest.raises(InputError, match=r"unknown target language code 'xx'.*known, e.g.: en, ha") as error:
        HFModel(m2m100.folder, separator="<brk>", src_lang="en", tgt_lang="xx")
    assert str(m2m100.folder) in str(error.value)


def test_the_manuals_python_blocks_run_on_the_tiny_model(hf_marian, sample_docs, tmp_path, monkeypatch):
    """docs/own-models.md's two Python blocks for a Hugging Face model, as written, in a folder where
    `my-opus-mt-en-de` and `my-doc-model` are the tiny Marian model's folder: adding the separator leaves it one
    token of the tokenizer with an embedding row per token; the decoding example translates `sentences` (two test
    documents, with their `docids`) into one list of sentences per document, the Python API's doc-trans."""
    from helpers import REPO, doc_blocks

    from docnmt.decode.backends.transformers.model import HFModel, HFSearcher

    page = REPO / "docs/own-models.md"
    (separator,) = doc_blocks(page, "python", "## Hugging Face models", "**A concatenation model needs a separator")
    (decoding,) = doc_blocks(page, "python", "## Hugging Face models", "**Decoding in Python.**")
    for name in ("my-opus-mt-en-de", "my-doc-model"):
        (tmp_path / name).symlink_to(hf_marian, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(separator, namespace)  # noqa: S102
    tokenizer, model = namespace["tokenizer"], namespace["model"]
    assert tokenizer.tokenize("Hello. <brk> Bye.").count("<brk>") == 1
    assert tokenizer.convert_tokens_to_ids("<brk>") != tokenizer.unk_token_id
    assert model.get_input_embeddings().weight.shape[0] == len(tokenizer)
    docs = short_documents(sample_docs, 2, 5)
    namespace = {"sentences": [s for d in docs for s in d.src], "docids": [d.docid for d in docs for _ in d.src]}
    exec(decoding, namespace)  # noqa: S102
    translations = namespace["translations"]
    assert [len(t) for t in translations] == [len(d) for d in docs] and len(translations) == 2
    marian = HFModel(hf_marian, separator="<brk>", device="cpu")
    assert translations == REGISTRY["doc-trans"](Decoder(HFSearcher(marian, beam=12), k=3, h=12), docs)


# ---- the CLIs: checks and translate with --backend transformers ---------------------------------------------------
def test_the_checks_of_a_transformers_folder_report_what_they_found(hf_marian, sample_docs, tmp_path):
    from docnmt.decode.backends.transformers.checks import check_transformers_model

    sample = tmp_path / "sample.en"
    sample.write_text("".join(s + "\n" for d in sample_docs for s in d.src), encoding="utf-8")
    report = check_transformers_model(hf_marian, "document", "<brk>", 3, sample=[sample])
    assert report["backend"] == "transformers" and report["model_type"] == "marian"
    assert report["separator"] == "<brk>" and report["k"] == 3 and report["language_token"] is None
    assert report["vocabulary"] <= report["embeddings"] and report["max_positions"] == 128
    assert report["sample"]["lines"] == sum(len(d) for d in sample_docs) and 0 < report["sample"]["longest"] <= 128


def test_each_failing_check_of_a_transformers_folder_is_one_line_naming_it(hf_marian, m2m100, tmp_path,
                                                                          capsys):
    """No separator, k, a token the embeddings lack, language codes, a sentence longer than the positions: the
    CLI's one error line each, naming the folder (or the sample's file and line)."""
    import shutil

    from docnmt.decode.checks import main

    def error(*argv: str) -> str:
        with pytest.raises(SystemExit) as stop:
            main(["--backend", "transformers", *argv])
        assert stop.value.code == 1
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1, lines
        return lines[0]

    folder = str(hf_marian)
    assert error("--model", folder, "--level", "document", "--separator", "<sep>", "--k", "3") == \
        f"error: {folder}: the document-level model: expected the separator '<sep>' to be a single token of the " \
        "tokenizer, found none. Add it before fine-tuning: tokenizer.add_special_tokens({'additional_special_tokens'" \
        ": ['<sep>']}), model.resize_token_embeddings(len(tokenizer)), then save both with save_pretrained"
    assert error("--model", folder, "--level", "document", "--separator", "<brk>").startswith(
        f"error: {folder}: expected the window size k (>= 2)")
    grown = tmp_path / "grown"
    shutil.copytree(folder, grown)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(grown, local_files_only=True)
    tokenizer.add_tokens([f"new{i}" for i in range(40)])
    tokenizer.save_pretrained(grown)
    assert "a token was added to the tokenizer without model.resize_token_embeddings" in \
        error("--model", str(grown), "--level", "sentence")
    long = tmp_path / "long.en"
    long.write_text("Hello.\n" + " ".join(["word"] * 300) + "\n", encoding="utf-8")
    assert error("--model", folder, "--level", "sentence", "--sample", str(long)).startswith(
        f"error: {long}:2: this sentence has ")
    m2m = str(m2m100.folder)
    assert error("--model", m2m, "--level", "sentence", "--src-lang", "en").startswith(
        f"error: {m2m}: expected the target language code: M2M100Tokenizer marks languages")
    assert error("--model", m2m, "--level", "sentence", "--src-lang", "en", "--tgt-lang", "xx").startswith(
        f"error: {m2m}: unknown target language code 'xx'")
    from transformers import GPT2Config

    GPT2Config(n_layer=1, n_embd=8, n_head=1, vocab_size=10).save_pretrained(tmp_path / "gpt2")
    assert error("--model", str(tmp_path / "gpt2"), "--level", "sentence") == \
        f"error: {tmp_path / 'gpt2'}: expected an encoder-decoder model, found 'gpt2' (is_encoder_decoder is false): " \
        "the strategies need a source encoder"


def write_talks(docs, path: Path) -> Path:
    """translate's file layout: one sentence per line, a blank line between documents."""
    path.write_text("\n".join("".join(s + "\n" for s in d.src) for d in docs), encoding="utf-8")
    return path


@pytest.mark.full  # make test-full: the manual's block run for real (tests/test_docs.py dry-runs it in make test)
def test_the_manuals_commands_check_and_translate_a_transformers_model_as_the_python_api(marian, hf_marian,
                                                                                          sample_docs, tmp_path):
    """docs/own-models.md's two commands for a Hugging Face model, as a user types them: after the activation line,
    in a fresh shell, from a folder outside the checkout (with a space), with no PYTHONPATH. The check passes, and
    doc-trans gives, document for document, the Python API's translations with the same settings."""
    import os
    import shlex
    import subprocess
    import sys

    from helpers import REPO, shell_commands

    from docnmt.decode.backends.transformers.model import HFSearcher

    venv = Path(sys.prefix)
    if sys.prefix == sys.base_prefix or not (venv / "bin/activate").exists():
        pytest.skip("the tests do not run in a virtual environment, so there is no .venv to activate")
    commands = shell_commands(REPO / "docs/own-models.md", "## Hugging Face models", "**Checking and translating.**")
    assert [c.split()[0] for c in commands] == ["docnmt-check-model", "docnmt-translate"], commands
    work = tmp_path / "my project"
    work.mkdir()
    (work / "my-doc-model").symlink_to(hf_marian, target_is_directory=True)
    docs = short_documents(sample_docs, 2, 5)
    write_talks(docs, work / "talks.en")
    env = {"HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin",
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    printed = []
    for command in commands:
        result = subprocess.run(["bash", "-c", f"set -e; source {shlex.quote(str(venv / 'bin/activate'))}; {command}"],
                                cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        printed.append(result.stdout)
    sentences = sum(len(d) for d in docs)
    assert printed[0].startswith("my-doc-model: marian (transformers), document-level, separator '<brk>', k=3; "
                                 f"sample: {sentences} sentences"), printed[0]
    assert f"doc-trans: 2 documents, {sentences} sentences" in printed[1], printed[1]
    expected = REGISTRY["doc-trans"](Decoder(HFSearcher(marian, beam=12), k=3, h=12), docs)
    assert (work / "talks.de").read_text(encoding="utf-8") == "\n".join("".join(s + "\n" for s in d) for d in expected)


def test_translate_2_pass_on_a_language_token_model(m2m100, sample_docs, tmp_path, capsys):
    """M2M100 as both models (first pass and 2-pass), its language codes as --src-lang/--tgt-lang; the Moses and
    BPE options are refused for a transformers model."""
    from docnmt.decode.backends.transformers.model import HFSearcher
    from docnmt.decode.translate import main

    docs = short_documents(sample_docs, 1, 4)
    talks = write_talks(docs, tmp_path / "talk.en")
    folder = str(m2m100.folder)
    models = ["--document-model", folder, "--sentence-model", folder, "--separator", "<brk>"]
    argv = ["--backend", "transformers", "--input", str(talks), "--output", str(tmp_path / "talk.de"),
            "--strategy", "2-pass", "--src-lang", "en", "--tgt-lang", "de", "--beam", "3", "--device", "cpu", *models]
    assert main(argv) == 0
    searcher = HFSearcher(m2m100, beam=3)
    first = REGISTRY["sentence-level"](Decoder(searcher, k=3, h=12), docs)
    docs[0].first_pass = first[0]
    expected = REGISTRY["2-pass"](Decoder(searcher, k=3, h=12), docs)
    assert (tmp_path / "talk.de").read_text(encoding="utf-8") == "".join(s + "\n" for s in expected[0])
    for extra in (["--tokenize", "moses"], ["--codes", "bpe.codes"], ["--document-data", "bin"]):
        with pytest.raises(SystemExit):
            main(argv + extra)
        assert "not for --backend transformers" in capsys.readouterr().err


def test_the_decode_cli_runs_a_transformers_model_with_plain_text_in_and_out(marian, hf_marian, sample_docs,
                                                                              tmp_path):
    """docnmt-decode --backend transformers (cheating, the reference as context): the Python API's hypotheses, the
    same plain text in both outputs, and the backend in the sidecar and its signature."""
    import json

    from docnmt.decode.cli import main
    from docnmt.decode.backends.transformers.model import HFSearcher

    files = write_test_set(short_documents(sample_docs, 2, 4), tmp_path)
    out = {ext: tmp_path / f"cheating.{ext}" for ext in ("bpe", "txt", "json")}
    assert main(["--backend", "transformers", "--strategy", "cheating", "--model", str(hf_marian),
                 "--src", str(files["src"]), "--ref", str(files["ref"]), "--docids", str(files["docids"]),
                 "--separator", "<brk>", "--beam", "3", "--k", "3", "--device", "cpu", "--tgt-lang", "de",
                 "--output-bpe", str(out["bpe"]), "--output", str(out["txt"]), "--sidecar", str(out["json"])]) == 0
    expected = REGISTRY["cheating"](Decoder(HFSearcher(marian, beam=3), k=3, h=12), short_documents(sample_docs, 2, 4))
    written = out["bpe"].read_text(encoding="utf-8").splitlines()
    assert written == [s for d in expected for s in d]
    assert out["txt"].read_text(encoding="utf-8").splitlines() == written
    sidecar = json.loads(out["json"].read_text(encoding="utf-8"))
    assert sidecar["backend"] == "transformers" and "|backend:transformers|" in sidecar["signature"]
    assert sidecar["hypotheses"] == sidecar["sentences"] == 8 and sidecar["decoder_positions"] > 0


def test_only_lines_decodes_a_ctxpro_sets_sentences_alone_on_a_transformers_model(marian, hf_marian, sample_docs,
                                                                                  tmp_path):
    """--only-lines on a Hugging Face seq2seq model (a ctxpro set's example sentences): no-context searches only
    the named lines, each to the Python API's hypothesis of it alone, the others empty."""
    import json

    from docnmt.decode.cli import main
    from docnmt.decode.backends.transformers.model import HFSearcher

    docs = short_documents(sample_docs, 2, 4)
    files = write_test_set(docs, tmp_path)
    (tmp_path / "examples.jsonl").write_text('{"line": 3}\n{"line": 7}\n', encoding="utf-8")
    out = {ext: tmp_path / f"no-context.{ext}" for ext in ("bpe", "txt", "json")}
    assert main(["--backend", "transformers", "--strategy", "no-context", "--model", str(hf_marian),
                 "--src", str(files["src"]), "--docids", str(files["docids"]), "--only-lines",
                 str(tmp_path / "examples.jsonl"), "--separator", "<brk>", "--beam", "3", "--device", "cpu",
                 "--tgt-lang", "de", "--output-bpe", str(out["bpe"]), "--output", str(out["txt"]),
                 "--sidecar", str(out["json"])]) == 0
    whole = [s for d in REGISTRY["no-context"](Decoder(HFSearcher(marian, beam=3), k=3, h=12), docs) for s in d]
    written = out["txt"].read_text(encoding="utf-8").splitlines()
    assert [written[3], written[7]] == [whole[3], whole[7]] and all(whole)
    assert not any(line for i, line in enumerate(written) if i not in (3, 7))
    assert json.loads(out["json"].read_text(encoding="utf-8"))["requests"] == 2


@pytest.mark.parametrize("backend, data, message", [
    ("fairseq", None, "a fairseq model needs its data folder (--data), or use --backend transformers"),
    ("transformers", "bin", "a data folder is for fairseq models; --backend transformers takes a Hugging Face seq2seq"),
])
def test_a_model_without_the_data_folder_its_backend_needs_is_a_usage_error_naming_it(sample_docs, tmp_path, capsys,
                                                                                    backend, data, message):
    """The decode CLI and the scorers load their model through backends.model_from_args: a fairseq checkpoint
    without --data, or a transformers folder with one, stops before anything is loaded, naming the path."""
    from docnmt.decode.cli import main
    from docnmt.score import perplexity

    files = write_test_set(short_documents(sample_docs, 1, 2), tmp_path)
    model = tmp_path / "model"
    extra = [] if data is None else ["--data", str(tmp_path / data)]
    named = model if data is None else tmp_path / data
    out = [str(tmp_path / f"out.{ext}") for ext in ("bpe", "txt", "json")]
    runs = [
        lambda: main(["--backend", backend, "--strategy", "no-context", "--model", str(model), *extra, "--src",
                      str(files["src"]), "--docids", str(files["docids"]), "--tgt-lang", "de", "--output-bpe", out[0],
                      "--output", out[1], "--sidecar", out[2]]),
        lambda: perplexity.main(["--backend", backend, "--model", str(model), *extra, "--level", "sentence", "--src",
                                 str(files["src"]), "--docids", str(files["docids"]),
                                 "--system", f"reference={files['ref']}", "--output", out[2]]),
    ]
    for run in runs:
        with pytest.raises(SystemExit) as stop:
            run()
        assert stop.value.code == 2
        assert f"{named}: {message}" in capsys.readouterr().err
    assert not any(Path(o).exists() for o in out)


def test_perplexity_and_cxmi_clis_score_a_transformers_model_as_its_own_forced_scoring(marian, hf_marian,
                                                                                        sample_docs, tmp_path):
    """docnmt-perplexity and docnmt-cxmi with --backend transformers: the reference's perplexity and CXMI equal
    those from HFModel.score, one teacher-forced pass over each whole window (another code path than the CLIs'
    prefilled context)."""
    import json
    import math

    from docnmt.score import cxmi, perplexity

    docs = short_documents(sample_docs, 2, 5)
    files = write_test_set(docs, tmp_path)
    model = ["--backend", "transformers", "--model", str(hf_marian), "--separator", "<brk>", "--k", "3"]
    assert perplexity.main([*model, "--level", "document", "--src", str(files["src"]), "--docids",
                            str(files["docids"]), "--system", f"reference={files['ref']}",
                            "--output", str(tmp_path / "ppl.json")]) == 0
    assert cxmi.main([*model, "--src", str(files["src"]), "--ref", str(files["ref"]), "--docids", str(files["docids"]),
                      "--output", str(tmp_path / "cxmi.json"), "--sentences", str(tmp_path / "cxmi.tsv")]) == 0
    windows, alone = [], []
    for d in docs:
        for i in range(len(d)):
            first = max(0, i - 2)
            windows.append((" <sep> ".join(d.src[first:i + 1]), " <sep> ".join(d.ref[first:i + 1])))
            alone.append((d.src[i], d.ref[i]))
    with_context = marian.score([s for s, _ in windows], [t for _, t in windows])
    without = marian.score([s for s, _ in alone], [t for _, t in alone])
    found = json.loads((tmp_path / "ppl.json").read_text(encoding="utf-8"))
    assert found["backend"] == "transformers"
    reference = found["systems"]["reference"]
    assert reference["tokens"] == sum(s.tokens for s in with_context)
    assert reference["perplexity"] == pytest.approx(
        math.exp(-sum(s.logprob for s in with_context) / reference["tokens"]), rel=1e-5)
    summary = json.loads((tmp_path / "cxmi.json").read_text(encoding="utf-8"))
    assert summary["backend"] == "transformers" and summary["reference"]["sentences"] == len(windows)
    expected = [a.logprob - b.logprob for a, b in zip(with_context, without)]
    assert summary["reference"]["cxmi"] == pytest.approx(sum(expected) / len(expected), abs=1e-4)


@pytest.mark.trains  # its model fixture comes from request.getfixturevalue
@pytest.mark.parametrize("which", ["marian", "m2m100"])
def test_a_prefix_and_its_continuation_are_the_tokens_of_the_joined_text(which, request, sample_docs):
    """The forced context (sentences, each followed by the separator) and the sentence after it tokenize as the
    joined window does, as the model saw it in training: no token of the context's trailing space."""
    model = request.getfixturevalue(which)
    doc = sample_docs[1]
    for i in range(1, 4):
        context, sentence = doc.tgt[max(0, i - 2):i], doc.tgt[i]
        prefix = model.encode(" <sep> ".join(context) + " <sep>")[:-1]
        joined = model.encode(" <sep> ".join(context + [sentence]))
        assert prefix + model.encode(sentence) == joined, (context, sentence)


def test_contrapro_accuracy_cli_scores_a_transformers_model_as_its_own_forced_scoring(marian, hf_marian,
                                                                                       sample_docs, tmp_path):
    """docnmt.score.contrastive --backend transformers on ContraPro-format examples made of demo sentences: each
    example's decision is the comparison of HFModel.score's log-probabilities of the window with each candidate."""
    import json

    from docnmt.corpora.contrapro import Example
    from docnmt.score import contrastive

    doc = max(sample_docs, key=len)
    src, tgt = doc.src[:6], doc.tgt[:6]
    assert len(src) == 6
    (tmp_path / "contrapro.en").write_text("".join(s + "\n" for s in src), encoding="utf-8")
    (tmp_path / "contrapro.de").write_text("".join(t + "\n" for t in tgt), encoding="utf-8")
    swaps = {"er": "sie", "sie": "er", "Er": "Sie", "Sie": "Er", "es": "sie", "Es": "Sie"}
    examples = []
    for line in range(2, 6):
        words = tgt[line].split()
        contrastive_targets = tuple(" ".join(swaps.get(w, w) if i == j else w for i, w in enumerate(words))
                                    for j in range(min(2, len(words))))
        examples.append(Example(line - 2, doc.docid, line, line, 0, "d", line, 1, "it", "es", src[line], tgt[line],
                                contrastive_targets))
    (tmp_path / "examples.jsonl").write_text("".join(json.dumps(e.to_json()) + "\n" for e in examples),
                                             encoding="utf-8")
    out = tmp_path / "accuracy.json"
    assert contrastive.main(["--backend", "transformers", "--model", str(hf_marian), "--level", "document",
                             "--k", "3", "--separator", "<brk>", "--src", str(tmp_path / "contrapro.en"), "--tgt",
                             str(tmp_path / "contrapro.de"), "--examples", str(tmp_path / "examples.jsonl"),
                             "--output", str(out)]) == 0
    expected = 0
    for e in examples:
        first = e.line - 2
        window = " <sep> ".join(src[first:e.line + 1])
        candidates = [tgt[e.line], *e.contrastive]
        scores = marian.score([window] * len(candidates),
                              [" <sep> ".join(tgt[first:e.line] + [c]) for c in candidates])
        expected += all(scores[0].logprob > other.logprob for other in scores[1:])
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["backend"] == "transformers" and "|backend:transformers" in result["signature"]
    assert (result["overall"]["correct"], result["overall"]["total"]) == (expected, len(examples))
