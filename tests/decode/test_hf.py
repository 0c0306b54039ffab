"""The transformers backend (docnmt.decode.hf) on a tiny Marian model built here (tests/hfmodel.py): its search
equals transformers' own generate(), with and without a forced target context; the strategies' equalities hold
on it; its checks fail with one clear line."""

from pathlib import Path

import pytest

from conftest import in_background

from docnmt.decode.search import Request
from docnmt.decode.strategies import REGISTRY, Decoder
from docnmt.textio import InputError

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

MAX_NEW = 60


@in_background("hf marian")
def marian_setup(folder: Path) -> Path:
    import hfmodel

    return hfmodel.build(folder / "model", steps=300)


@pytest.fixture(scope="module")
def marian():
    from docnmt.decode.hf import HFModel

    return HFModel(marian_setup.get(), separator="<brk>", device="cpu")


@pytest.fixture(scope="module")
def test_docs():
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
def test_empty_context_search_equals_generate_on_every_demo_test_sentence(marian, test_docs, beam, lenpen,
                                                                         early_stopping):
    from docnmt.decode.hf import HFSearcher

    sentences = [s for doc in test_docs for s in doc.src]
    assert len(sentences) >= 30
    searcher = HFSearcher(marian, beam=beam, lenpen=lenpen, early_stopping=early_stopping, max_new_tokens=MAX_NEW,
                          batch_size=16)
    mine = ours(searcher, [Request(marian.encode(s, source=True)) for s in sentences])
    theirs = [h for i in range(0, len(sentences), 16)
              for h in generate(marian, sentences[i:i + 16], beam, lenpen, early_stopping)]
    assert same(mine, theirs), [n for n, (a, b) in enumerate(zip(mine, theirs)) if a != b][:5]


def test_forced_context_search_equals_generate_with_decoder_input_ids(marian, test_docs):
    from docnmt.decode.hf import HFSearcher

    searcher = HFSearcher(marian, beam=4, lenpen=1.0, early_stopping=True, max_new_tokens=MAX_NEW)
    checked = 0
    for doc in test_docs:
        for i in range(2, len(doc)):
            source = marian.encode(" <sep> ".join(doc.src[i - 2:i + 1]), source=True)
            context = marian.encode(" <sep> ".join(doc.tgt[i - 2:i]) + " <sep>")[:-1]
            mine = ours(searcher, [Request(source, context)])
            text = marian.tokenizer.decode(source[:-1])
            theirs = generate_ids(marian, encoded_ids(source), 4, 1.0, True, prompts=[marian.prompt + context])
            assert same(mine, theirs), (doc.docid, i, text)
            checked += 1
    assert checked >= 10


def test_forced_scoring_gives_the_searchs_own_log_probability(marian, test_docs):
    from docnmt.decode.hf import HFSearcher

    searcher = HFSearcher(marian, beam=4, early_stopping=True, max_new_tokens=MAX_NEW)
    doc = test_docs[0]
    requests = [Request(marian.encode(" <sep> ".join(doc.src[:2]), source=True),
                        marian.encode(doc.tgt[0] + " <sep>")[:-1]),
                Request(marian.encode(doc.src[0], source=True))]
    best = [nbest[0] for nbest in searcher.search(requests)]
    scored = searcher.score_forced(requests, [h.tokens for h in best])
    for hyp, score in zip(best, scored):
        assert score.tokens == len(hyp.tokens) + 1
        assert score.logprob == pytest.approx(hyp.logprob, abs=1e-4)


def decode(model, strategy, docs, h=12, mode="sequential"):
    from docnmt.decode.hf import HFSearcher

    searcher = HFSearcher(model, beam=3, early_stopping=True, max_new_tokens=MAX_NEW)
    decoder = Decoder(searcher, k=3, h=h, doc_trans_mode=mode)
    out = REGISTRY[strategy](decoder, docs)
    assert [len(o) for o in out] == [len(d) for d in docs]
    return out, decoder


def documents(test_docs, first_pass=None):
    from docnmt.decode.cli import group

    src = [s for d in test_docs for s in d.src]
    ref = [t for d in test_docs for t in d.tgt]
    ids = [d.docid for d in test_docs for _ in d.src]
    return group(src, ids, ref, first_pass)


def test_doc_trans_beam_with_h1_equals_doc_trans(marian, test_docs):
    docs = documents(test_docs)
    assert decode(marian, "doc-trans-beam", docs, h=1)[0] == decode(marian, "doc-trans", docs)[0]


def test_parallel_doc_trans_equals_sequential(marian, test_docs):
    first = [s for doc in decode(marian, "sentence-level", documents(test_docs))[0] for s in doc]
    docs = documents(test_docs, first_pass=first)
    sequential = decode(marian, "doc-trans", docs)[0]
    parallel, decoder = decode(marian, "doc-trans", docs, mode="parallel")
    assert parallel == sequential and decoder.stats.converged


def test_every_strategy_translates_text_in_and_text_out(marian, test_docs):
    docs = documents(test_docs[:2])
    for strategy in ("no-context", "full-segment", "last-sentence", "first-sentence", "cheating", "doc-trans"):
        out, _ = decode(marian, strategy, docs)
        assert all(isinstance(s, str) and "<brk>" not in s and "</s>" not in s for doc in out for s in doc), strategy


def test_a_sentence_longer_than_the_positions_is_an_error_naming_the_request(marian):
    from docnmt.decode.hf import HFSearcher

    long = marian.encode(" ".join(["Hallo"] * (marian.max_positions + 5)), source=True)
    with pytest.raises(InputError, match=r"request 1: source too long: .* max source positions are 128"):
        HFSearcher(marian).search([Request(long)])


def test_a_context_longer_than_the_positions_is_an_error_naming_the_request(marian):
    from docnmt.decode.hf import HFSearcher

    source = marian.encode("Hallo.", source=True)
    context = marian.encode(" ".join(["Hallo"] * marian.max_positions))[:-1]
    with pytest.raises(InputError, match=r"request 2: prefix too long: \d+ tokens, at most 126 fit the model's max "
                                         r"positions 128 with </s>"):
        HFSearcher(marian).search([Request(source), Request(source, context)])


def test_no_separator_token_is_an_error_that_says_how_to_add_one(marian_setup_folder):
    from docnmt.decode.hf import HFModel

    model = HFModel(marian_setup_folder, separator="<sep>", device="cpu")
    with pytest.raises(InputError) as error:
        model.check_separator()
    message = str(error.value)
    assert str(marian_setup_folder) in message and "'<sep>' to be a single token of the tokenizer" in message
    assert "add_special_tokens" in message and "resize_token_embeddings" in message


@pytest.fixture(scope="module")
def marian_setup_folder():
    return marian_setup.get()


def test_a_decoder_only_model_is_refused_naming_the_folder(tmp_path):
    from transformers import GPT2Config

    from docnmt.decode.hf import HFModel

    GPT2Config(n_layer=1, n_embd=8, n_head=1, vocab_size=10).save_pretrained(tmp_path)
    with pytest.raises(InputError, match="expected an encoder-decoder model, found 'gpt2'") as error:
        HFModel(tmp_path)
    assert str(tmp_path) in str(error.value)


def test_a_folder_without_config_is_refused(tmp_path):
    from docnmt.decode.hf import HFModel

    with pytest.raises(InputError, match="expected a transformers model folder"):
        HFModel(tmp_path)


@in_background("hf m2m100")
def m2m100_setup(folder: Path) -> Path:
    import hfmodel

    return hfmodel.build_m2m100(folder / "model", steps=150)


@pytest.fixture(scope="module")
def m2m100():
    from docnmt.decode.hf import HFModel

    return HFModel(m2m100_setup.get(), separator="<brk>", src_lang="en", tgt_lang="de", device="cpu")


def test_a_language_token_model_starts_the_decoder_with_its_target_language(m2m100):
    tokens = m2m100.tokenizer.convert_ids_to_tokens
    assert tokens(m2m100.prompt) == ["</s>", "__de__"]
    source = m2m100.encode("Hello. <sep> How are you?", source=True)
    assert tokens(source)[0] == "__en__" and tokens(source)[-1] == "</s>" and "<brk>" in tokens(source)
    assert "__de__" not in tokens(m2m100.encode("Hallo. <sep> Wie geht es?"))


def test_a_language_token_model_searches_as_generate_after_its_prompt(m2m100, test_docs):
    """With and without a target context: generate(decoder_input_ids=[</s>, __de__, context...])."""
    from docnmt.decode.hf import HFSearcher

    searcher = HFSearcher(m2m100, beam=3, lenpen=1.0, early_stopping=True, max_new_tokens=MAX_NEW)
    doc = test_docs[1]
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
    from docnmt.decode.hf import HFModel

    with pytest.raises(InputError, match="expected the target language code: M2M100Tokenizer marks languages"):
        HFModel(m2m100.folder, separator="<brk>", src_lang="en")
    with pytest.raises(InputError, match=r"unknown target language code 'xx'.*known, e.g.: en, ha") as error:
        HFModel(m2m100.folder, separator="<brk>", src_lang="en", tgt_lang="xx")
    assert str(m2m100.folder) in str(error.value)


def python_blocks(page: Path, section: str) -> list[str]:
    text = page.read_text(encoding="utf-8").split(section, 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


def test_the_manuals_decoding_example_runs_on_the_tiny_model(marian_setup_folder, test_docs):
    """docs/own-models.md's Hugging Face decoding block, as written, on the tiny Marian model's folder."""
    from conftest import REPO

    blocks = python_blocks(REPO / "docs/own-models.md", "## Hugging Face models")
    assert len(blocks) == 2 and '"my-doc-model"' in blocks[1]
    docs = test_docs[:2]
    namespace = {"sentences": [s for d in docs for s in d.src], "docids": [d.docid for d in docs for _ in d.src]}
    exec(blocks[1].replace('"my-doc-model"', repr(str(marian_setup_folder))), namespace)  # noqa: S102
    assert [len(t) for t in namespace["translations"]] == [len(d) for d in docs]
