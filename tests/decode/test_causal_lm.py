"""The causal-LM backend (docnmt.decode.backends.causal_lm) on tiny Llama and Qwen2 models built here
(tests/llmmodel.py): the search with the reused cache gives generate's outputs on the whole prompt; the strategies'
requests become the conversations the docs describe; the checks fail with one clear line."""

import json
import os
from pathlib import Path

import pytest

from docnmt.decode.documents import group
from docnmt.decode.strategies import REGISTRY, Decoder
from docnmt.textio import InputError

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"llama_model"}


@pytest.fixture(scope="module")
def llama_model(tiny_llama):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")


@pytest.fixture(scope="module")
def sample_docs():
    import llmmodel

    _, docs = llmmodel.demo_documents()
    docs = docs[:2]
    return group([s for d in docs for s in d.src][:14], [d.docid for d in docs for _ in d.src][:14],
                 ref=[t for d in docs for t in d.tgt][:14])


class Recording:
    """A searcher's search, each request with its hypotheses kept."""

    def __init__(self, searcher):
        self.searcher, self.seen = searcher, []
        original = searcher.search

        def search(requests):
            found = original(requests)
            self.seen += list(zip(requests, found))
            return found

        searcher.search = search


def _run(model, strategy, docs, beam, reuse_cache, context="window"):
    """A strategy's decode with the backend's search (the reused cache, requests in batches), or with generate on
    each request's whole prompt, one request at a time (``reuse_cache=False``), as the papers' scripts."""
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.documents import context_k

    searcher = CausalLMSearcher(model, beam=beam, max_new_tokens=40, reuse_cache=reuse_cache,
                                batch_size=64 if reuse_cache else 1)
    recording = Recording(searcher)
    out = REGISTRY[strategy](Decoder(searcher, k=context_k(context, 3, docs), h=2, sentence_searcher=searcher,
                                     doc_trans_mode="sequential"), docs)
    # in the order of their sentences: doc-trans gives each search call the next sentences of batch_size documents
    # (the strategies' _context_search), so the two batch sizes search them in different orders
    return out, sorted(recording.seen, key=lambda pair: pair[0].line), searcher


@pytest.mark.parametrize("beam", [1, 3])
@pytest.mark.parametrize("strategy", ["doc-trans", "cheating", "last-sentence"])
def test_the_reused_cache_gives_generates_outputs_on_the_whole_prompt(llama_model, sample_docs, strategy, beam):
    cached, with_cache, searcher = _run(llama_model, strategy, sample_docs, beam, reuse_cache=True)
    plain, without, baseline = _run(llama_model, strategy, sample_docs, beam, reuse_cache=False)
    assert cached == plain
    assert len(with_cache) == len(without) == sum(len(d) for d in sample_docs)
    for (request, hyps), (same, expected) in zip(with_cache, without):
        assert request == same
        assert [h.tokens for h in hyps] == [h.tokens for h in expected]
        for h, e in zip(hyps, expected):
            assert h.score == pytest.approx(e.score, abs=1e-4) and h.logprob == pytest.approx(e.logprob, abs=1e-4)
    # the cache saved prefill: every request after the first reads at least the prefix all prompts share (the
    # instruction) from it
    assert baseline.tokens_cached == 0
    assert searcher.tokens_prefilled + searcher.tokens_cached == baseline.tokens_prefilled
    prompts = [llama_model.conversation(request.source, request.prefix) for request, _ in with_cache]
    shared = min(len(os.path.commonprefix(prompts)), min(len(p) for p in prompts) - 1)
    assert shared > 10 and searcher.tokens_cached >= (len(prompts) - 1) * shared
    # a batch runs until its longest answer ends: its rows that ended earlier compute positions too
    assert searcher.tokens_generated >= baseline.tokens_generated


@pytest.mark.parametrize("beam", [1, 3])
def test_with_the_document_as_context_each_turn_prefills_only_its_new_tokens(llama_model, sample_docs, beam):
    """doc-trans with ``--context document``: each sentence's conversation is the document so far, whose earlier
    turns come from the cache; the outputs are generate's on the whole prompt."""
    cached, with_cache, searcher = _run(llama_model, "doc-trans", sample_docs, beam, True, context="document")
    plain, without, baseline = _run(llama_model, "doc-trans", sample_docs, beam, False, context="document")
    assert cached == plain
    for (request, hyps), (_, expected) in zip(with_cache, without):
        assert [h.tokens for h in hyps] == [h.tokens for h in expected]
        assert [h.score for h in hyps] == pytest.approx([h.score for h in expected], abs=1e-4)
    doc = sample_docs[0]  # its last sentence's request: the whole document, the model's own earlier translations
    (last,) = [request for request, _ in with_cache if llama_model.sentences(request.source) == doc.src]
    assert llama_model.sentences(last.prefix[:-1]) == cached[0][:-1]
    # the document so far is read from the cache: most of the prompt tokens
    assert searcher.tokens_cached > 2 * searcher.tokens_prefilled
    assert searcher.tokens_prefilled + searcher.tokens_cached == baseline.tokens_prefilled


def test_full_segment_with_the_document_as_context_is_the_whole_document_in_one_turn(llama_model, sample_docs):
    _, seen, _ = _run(llama_model, "full-segment", sample_docs, 1, True, context="document")
    assert [llama_model.sentences(request.source) for request, _ in seen] == [d.src for d in sample_docs]
    assert all(not request.prefix for request, _ in seen)


@pytest.mark.parametrize("beam", [1, 3])
def test_a_batch_of_prompts_of_different_lengths_gives_each_ones_own_search(llama_model, sample_docs, beam):
    """Requests of different lengths in one batch (each cache padded on the left, the padding masked) get the
    answers and scores that each gets alone; the token limit in positions splits the batch."""
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    decoder = Decoder(CausalLMSearcher(llama_model, beam=beam, max_new_tokens=30), k=3, h=1)
    doc = sample_docs[0]
    requests = [decoder.request(doc.src[max(0, i - 2):i + 1], doc.ref[max(0, i - 2):i]) for i in range(len(doc))]
    requests.append(decoder.request(doc.src[:3]))  # a window of three lines
    alone = CausalLMSearcher(llama_model, beam=beam, max_new_tokens=30, batch_size=1)
    batched = CausalLMSearcher(llama_model, beam=beam, max_new_tokens=30)
    sizes = []
    batched.on_batch = sizes.append
    expected, found = alone.search(requests), batched.search(requests)
    assert sizes == [len(requests)]
    for mine, its in zip(found, expected):
        assert [h.tokens for h in mine] == [h.tokens for h in its]
        assert [h.score for h in mine] == pytest.approx([h.score for h in its], abs=1e-4)
        assert [h.logprob for h in mine] == pytest.approx([h.logprob for h in its], abs=1e-4)
    longest = max(len(llama_model.conversation(r.source, r.prefix)) for r in requests)
    limited = CausalLMSearcher(llama_model, beam=beam, max_new_tokens=30, max_tokens=beam * (longest + 30) * 2)
    sizes.clear()
    limited.on_batch = sizes.append
    assert [[h.tokens for h in hyps] for hyps in limited.search(requests)] == [[h.tokens for h in hyps]
                                                                                for hyps in expected]
    assert max(sizes) == 2 and sum(sizes) == len(requests)


def test_source_primed_gives_the_whole_source_document_first_and_computes_it_once(llama_model, sample_docs):
    """source-primed: doc-trans's conversation after the whole source document, which opens the first user
    message; the document's tokens come from the cache after the first sentence; generate's outputs."""
    cached, with_cache, searcher = _run(llama_model, "source-primed", sample_docs, 1, True)
    plain, without, baseline = _run(llama_model, "source-primed", sample_docs, 1, False)
    assert cached == plain
    doc = sample_docs[0]
    (third,) = [r for r, _ in with_cache if llama_model.sentences(r.source) == doc.src[:3]]
    assert llama_model.sentences(third.document) == doc.src
    assert llama_model.sentences(third.prefix[:-1]) == cached[0][:2]  # doc-trans's: its own translations
    done, current = [(doc.src[0], cached[0][0]), (doc.src[1], cached[0][1])], doc.src[2]
    messages = llama_model.prompter.messages(done, current, doc.src)
    assert messages[1]["content"] == "The whole English document, for context:\n" + "\n".join(doc.src) + \
        "\n\n" + doc.src[0]
    assert [m["content"] for m in messages[2:]] == [cached[0][0], doc.src[1], cached[0][1], doc.src[2]]
    assert llama_model.conversation(third.source, third.prefix, third.document) == \
        llama_model.prompter.ids(done, current, doc.src)
    assert searcher.tokens_prefilled + searcher.tokens_cached == baseline.tokens_prefilled
    assert searcher.tokens_prefilled < baseline.tokens_prefilled / 2  # the document once per document


def test_source_primed_is_refused_for_models_without_a_conversation(tmp_path, capsys):
    from docnmt.decode import cli
    from docnmt.decode.strategy_registry import not_for_backend, strategies_for

    assert not_for_backend("source-primed", "causal-lm") is None and not_for_backend("doc-trans", "fairseq") is None
    assert "source-primed" not in strategies_for("fairseq") and strategies_for("causal-lm")[-2:] == ["source-primed", "refine"]
    (tmp_path / "src").write_text("a\n", encoding="utf-8")
    (tmp_path / "ids").write_text("d\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        cli.main(["--strategy", "source-primed", "--model", str(tmp_path / "m.pt"), "--data", str(tmp_path),
                  "--src", str(tmp_path / "src"), "--docids", str(tmp_path / "ids"), "--tgt-lang", "de",
                  "--output-bpe", str(tmp_path / "o.bpe"), "--output", str(tmp_path / "o"),
                  "--sidecar", str(tmp_path / "o.json")])
    assert "source-primed is for causal-lm, vllm or openai models, whose prompt is a conversation; fairseq models have none" in \
        capsys.readouterr().err
    assert not list(tmp_path.glob("o*"))


def test_a_qwen2_base_model_without_a_chat_template_searches_with_the_plain_template(tiny_qwen2_base, sample_docs):
    from docnmt.decode.backends import load_model

    with pytest.raises(InputError, match="the tokenizer has no chat template and no template was given"):
        load_model("causal-lm", tiny_qwen2_base, src_lang="en", tgt_lang="de", device="cpu")
    model = load_model("causal-lm", tiny_qwen2_base, src_lang="en", tgt_lang="de", device="cpu", template="translate")
    assert not model.prompter.chat
    for beam in (1, 2):
        outs = [_run(model, "doc-trans", sample_docs[:1], beam, reuse)[1] for reuse in (True, False)]
        for (_, hyps), (_, expected) in zip(*outs):
            assert [h.tokens for h in hyps] == [h.tokens for h in expected]
            assert [h.score for h in hyps] == pytest.approx([h.score for h in expected], abs=1e-4)
    text = model.prompter.text([("It is late.", "Er ist spät.")], "Where is the train?")
    assert text.startswith(model.prompter._fill(model.template.system))
    assert "English:\nIt is late.\nGerman:\nEr ist spät.\n\nEnglish:\nWhere is the train?\nGerman:\n" in text


def test_context_sentences_are_earlier_turns_holding_the_strategys_translations(llama_model, sample_docs):
    """cheating's earlier turns hold the reference; doc-trans's the model's own output; last-sentence asks for the
    window's lines in one message."""
    _, seen, _ = _run(llama_model, "cheating", sample_docs[:1], 1, True)
    doc = sample_docs[0]
    request = seen[2][0]  # the third sentence: two context turns
    sources = llama_model.sentences(request.source)
    context = llama_model.sentences(request.prefix[:-1])
    assert sources == doc.src[:3] and context == doc.ref[:2]
    messages = llama_model.prompter.messages(list(zip(sources, context)), sources[2])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [m["content"] for m in messages[1:]] == [doc.src[0], doc.ref[0], doc.src[1], doc.ref[1], doc.src[2]]
    own, seen, _ = _run(llama_model, "doc-trans", sample_docs[:1], 1, True)
    assert llama_model.sentences(seen[2][0].prefix[:-1]) == own[0][:2]
    _, seen, _ = _run(llama_model, "last-sentence", sample_docs[:1], 1, True)
    assert llama_model.sentences(seen[2][0].source) == doc.src[:3] and not seen[2][0].prefix


def test_an_answer_to_a_window_is_split_into_its_lines(llama_model):
    ids = llama_model.tokenizer("Er ist spät.\n\nWo ist der Zug?\n", add_special_tokens=False)["input_ids"]
    window = llama_model.hypothesis(ids + [llama_model.eos], 0.0, 0.0, lines=2)
    assert llama_model.decode(window.tokens) == "Er ist spät. <sep> Wo ist der Zug?"
    # the answer to one sentence is its translation, whatever its lines
    sentence = llama_model.hypothesis(ids + [llama_model.eos], 0.0, 0.0, lines=1)
    assert llama_model.decode(sentence.tokens) == "Er ist spät. Wo ist der Zug?"
    # complete (what MBR selection compares): ended with the end of the turn, with the lines asked for
    assert window.complete and not sentence.complete, "a second line to one sentence runs on"
    assert not llama_model.hypothesis(ids, 0.0, 0.0, lines=2).complete, "cut before the end of the turn"


def _config_only(folder: Path, config) -> Path:
    folder.mkdir(parents=True)
    config.save_pretrained(folder)
    return folder


def test_every_check_fails_with_one_line(tiny_llama, tmp_path):
    from transformers import MarianConfig

    from docnmt.decode.backends import check

    ok = check("causal-lm", tiny_llama, None, "document", k=3, src_lang="en", tgt_lang="de")
    assert ok["chat_template"] and ok["model_type"] == "llama" and ok["max_positions"] == 512
    with pytest.raises(InputError, match="not a causal LM: a marian encoder-decoder model"):
        check("causal-lm", _config_only(tmp_path / "marian", MarianConfig()), None, "sentence")
    with pytest.raises(InputError, match="no config.json"):
        check("causal-lm", tmp_path, None, "sentence")
    # a template without the placeholder {source}
    broken = tmp_path / "broken.yaml"
    broken.write_text("system: Translate.\nuser: Translate this.\nplain: {start: '', user: '{source}', "
                      "assistant: 'A:', end: '\\n'}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken.yaml: the template's user lacks the placeholder \{source\}"):
        check("causal-lm", tiny_llama, None, "sentence", src_lang="en", tgt_lang="de", template=str(broken))
    # a template whose document text (source-primed's) lacks the placeholder {document}
    nodoc = tmp_path / "nodoc.yaml"
    nodoc.write_text("system: Translate.\nuser: '{source}'\ndocument: 'The document:'\nplain: {start: '', "
                     "user: '{source}', assistant: 'A:', end: '\\n'}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"nodoc.yaml: the template's document lacks the placeholder \{document\}"):
        check("causal-lm", tiny_llama, None, "sentence", src_lang="en", tgt_lang="de", template=str(nodoc))
    with pytest.raises(InputError, match="no such template"):
        check("causal-lm", tiny_llama, None, "sentence", src_lang="en", tgt_lang="de", template="nonesuch")
    with pytest.raises(InputError, match="give --src-lang and --tgt-lang"):
        check("causal-lm", tiny_llama, None, "sentence")
    with pytest.raises(InputError, match="k \\(>= 2\\)"):
        check("causal-lm", tiny_llama, None, "document", k=1, src_lang="en", tgt_lang="de")
    # a sentence whose conversation outgrows the context window: the document and the sentence are named
    long = tmp_path / "long.txt"
    long.write_text("Short one.\n\nIt is late.\n" + " ".join(["A very long sentence indeed."] * 40) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=r"long.txt:4: document 2: the prompt of this sentence, with its 1 previous "
                                         r"sentences as turns, has \d+ tokens, the model's context window 512"):
        check("causal-lm", tiny_llama, None, "document", k=3, src_lang="en", tgt_lang="de", sample=[long])
    with pytest.raises(ValueError, match="a prompt template is for causal-lm, vllm or openai models, not transformers"):
        check("transformers", tiny_llama, None, "sentence", template="translate")


def test_check_model_and_translate_run_from_the_command_line(tiny_llama, tmp_path, capsys):
    from docnmt.decode import checks, translate

    talks = tmp_path / "talks.txt"
    talks.write_text("It is late.\nWhere is the train?\n\nExcuse me.\nI am looking for a sweater.\n", encoding="utf-8")
    assert checks.main(["--backend", "causal-lm", "--model", str(tiny_llama), "--level", "document", "--k", "3",
                        "--src-lang", "en", "--tgt-lang", "de", "--sample", str(talks),
                        "--output", str(tmp_path / "check.json")]) == 0
    assert "llama (causal LM), en->de, chat template with translate.yaml" in capsys.readouterr().out
    assert json.loads((tmp_path / "check.json").read_text())["sample"]["documents"] == 2
    # doc-trans with the reused cache, the whole document in one turn, source-primed
    for strategy, extra in (("doc-trans", ["--cache-bytes", "16M"]), ("full-segment", ["--context", "document"]),
                            ("source-primed", [])):
        out = tmp_path / f"{strategy}.txt"
        assert translate.main(["--backend", "causal-lm", "--document-model", str(tiny_llama), "--src-lang", "en",
                               "--tgt-lang", "de", "--strategy", strategy, "--input", str(talks), "--output",
                               str(out), "--beam", "2", "--max-len-b", "40", *extra]) == 0
        lines = out.read_text(encoding="utf-8").split("\n")
        assert lines[2] == "" and len(lines) == 6, lines
    with pytest.raises(SystemExit):
        translate.main(["--backend", "transformers", "--document-model", str(tiny_llama), "--template", "translate",
                        "--input", str(talks), "--output", str(tmp_path / "x.txt")])
    assert "--template is for causal-lm, vllm or openai models" in capsys.readouterr().err


def test_forced_scoring_counts_the_answer_after_its_context_turns(llama_model):
    sources = ["It is late. <sep> Where is the train?"]
    targets = ["Es ist spät. <sep> Wo ist der Zug?"]
    window = llama_model.score(sources, targets, after_last_sep=True)[0]
    alone = llama_model.score(["Where is the train?"], ["Wo ist der Zug?"])[0]
    answer = llama_model.answer("Wo ist der Zug?")
    assert window.tokens == alone.tokens == len(answer)
    assert window.logprob < 0 and alone.logprob < 0 and window.logprob != alone.logprob
    whole = llama_model.score(sources, targets, after_last_sep=False)[0]
    assert whole.tokens == len(llama_model.answer("Es ist spät.\nWo ist der Zug?"))


def test_the_manual_shows_the_default_template_as_it_is(tmp_path):
    """docs/own-models.md's template block is translate.yaml without its comments, and, written to a file, it is a
    template (prompting.template.load_template) equal to the repository's."""
    import dataclasses

    from helpers import REPO, doc_blocks

    from docnmt.decode.prompting.template import TEMPLATES, load_template

    shown = doc_blocks(REPO / "docs/own-models.md", "yaml", "## LLMs", "**The prompt is a conversation.**")
    lines = (TEMPLATES / "translate.yaml").read_text(encoding="utf-8").splitlines()
    assert shown == ["".join(line.split(" #")[0].rstrip() + "\n" for line in lines
                             if line.strip() and not line.lstrip().startswith("#"))]
    (tmp_path / "translate.yaml").write_text(shown[0], encoding="utf-8")
    mine, theirs = load_template(tmp_path / "translate.yaml"), load_template("translate")
    assert dataclasses.replace(mine, path=theirs.path) == theirs
    assert "{source}" in mine.user and mine.plain["assistant"] == "{target_language}:\n"


@pytest.mark.full  # make test-full: the manual's block run for real (tests/test_docs.py dry-runs it in make test)
def test_the_manuals_commands_check_and_translate_a_causal_lm_as_the_python_api(tiny_llama, sample_docs, tmp_path):
    """docs/own-models.md's two commands for an LLM ("LLMs", "Checking and translating."), as written, through a
    shell with the console scripts on PATH, in a folder where `my-llm` is the tiny Llama and `talks.en` two short
    documents: the check passes on the sample, and doc-trans gives, document for document, the Python API's
    translations with the command's settings (beam 12, k 3)."""
    import subprocess

    from helpers import REPO, shell_commands, tool_env

    from docnmt.decode.backends import load_model, make_searcher

    commands = shell_commands(REPO / "docs/own-models.md", "## LLMs", "**Checking and translating.**")
    assert [c.split()[0] for c in commands] == ["docnmt-check-model", "docnmt-translate"], commands
    (tmp_path / "my-llm").symlink_to(tiny_llama, target_is_directory=True)
    docs = group([s for d in sample_docs for s in d.src[:2]], [d.docid for d in sample_docs for _ in d.src[:2]])
    (tmp_path / "talks.en").write_text("\n".join("".join(s + "\n" for s in d.src) for d in docs), encoding="utf-8")
    printed = []
    for command in commands:
        result = subprocess.run(command, shell=True, cwd=tmp_path, env=tool_env(), capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        printed.append(result.stdout)
    assert printed[0].startswith("my-llm: llama (causal LM), en->de, chat template with translate.yaml, "
                                 "document-level, k=3; sample: 2 documents,"), printed[0]
    assert printed[0].endswith(": OK\n"), printed[0]
    assert "doc-trans: 2 documents, 4 sentences" in printed[1], printed[1]
    model = load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")
    expected = REGISTRY["doc-trans"](Decoder(make_searcher(model, beam=12), k=3, h=12), docs)
    assert (tmp_path / "talks.de").read_text(encoding="utf-8") == \
        "\n".join("".join(s + "\n" for s in d) for d in expected)


def test_forced_scoring_with_the_cache_equals_it_without(llama_model, sample_docs):
    """The searcher's score_forced (perplexity, CXMI): the same log-probs with the reused cache as without, and a
    model's own score of the window's last sentence."""
    import llmmodel
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    doc = sample_docs[0]
    model = llama_model
    requests, targets = llmmodel.forced_requests(model, doc, context=2)
    cached = CausalLMSearcher(model, reuse_cache=True).score_forced(requests, targets)
    plain = CausalLMSearcher(model, reuse_cache=False).score_forced(requests, targets)
    assert [s.logprob for s in cached] == pytest.approx([s.logprob for s in plain], abs=1e-4)
    assert [s.tokens for s in cached] == [s.tokens for s in plain]
    window = model.score([" <sep> ".join(doc.src[:3])], [" <sep> ".join(doc.ref[:3])])[0]
    assert window.logprob == pytest.approx(cached[2].logprob, abs=1e-4)


def test_epsilon_samples_are_reproducible_under_a_seed(llama_model, sample_docs):
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.sampling import Sampler

    searcher = CausalLMSearcher(llama_model, beam=1, max_new_tokens=30)
    docs = sample_docs[:1]
    first = REGISTRY["sentence-level"](Decoder(Sampler(searcher, 3, 0.02, 7), k=3, h=2), docs)
    again = REGISTRY["sentence-level"](Decoder(Sampler(searcher, 3, 0.02, 7), k=3, h=2), docs)
    assert first == again and len(first[0]) == len(docs[0])


def test_the_oldest_context_turns_are_dropped_where_the_conversation_outgrows_the_context_window(tiny_llama,
                                                                                               sample_docs):
    """With the document as context, a conversation longer than the model's window loses its oldest turns (counted
    as truncated), as a concatenation model's window its oldest sentences."""
    from docnmt.decode.backends import load_model
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    model = load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")
    model.max_positions = 220
    searcher = CausalLMSearcher(model, beam=1, max_new_tokens=20)
    recording = Recording(searcher)
    decoder = Decoder(searcher, k=len(sample_docs[0]), h=2)
    REGISTRY["cheating"](decoder, sample_docs[:1])
    assert decoder.stats.context_truncated > 0
    for request, _ in recording.seen:
        assert model.fits(request.source, request.prefix)
    longest = max(len(model.sentences(r.source)) for r, _ in recording.seen)
    assert 1 < longest < len(sample_docs[0])


def test_a_context_longer_than_its_earlier_sources_is_joined_into_the_first_turn():
    from docnmt.decode.prompting.conversation import turns

    assert turns(["a", "b", "c"], ["A", "B"]) == ([("a", "A"), ("b", "B")], "c")
    assert turns(["a", "b", "c"], []) == ([], "a\nb\nc")
    assert turns(["a", "b"], ["A1", "A2", "B"]) == ([("a", "A1 A2 B")], "b")
    assert turns(["a", "b", "c"], ["X", "A", "B"]) == ([("a", "X A"), ("b", "B")], "c")
    assert turns(["a"], ["A"]) == ([], "a")


#: A template of one's own for a chat model: system and user only (no plain part, which only a base model needs).
CHAT_ONLY = "system: Render the {source_language} lines in {target_language}.\nuser: \"{source}\"\n"


def test_a_template_without_plain_serves_a_chat_model_and_is_refused_for_a_base_model(tiny_llama, tiny_qwen2_base,
                                                                                       tmp_path):
    from docnmt.decode.backends import check, load_model

    own = tmp_path / "chat-only.yaml"
    own.write_text(CHAT_ONLY, encoding="utf-8")
    report = check("causal-lm", tiny_llama, None, "document", k=3, src_lang="en", tgt_lang="de", template=str(own))
    assert report["template"] == str(own) and report["chat_template"]
    model = load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu", template=str(own))
    messages = model.prompter.messages([], "It is late.")
    assert messages == [{"role": "system", "content": "Render the English lines in German."},
                        {"role": "user", "content": "It is late."}]
    # plain: is needed where it is used: a base model's tokenizer has no chat template
    with pytest.raises(InputError, match=r"chat-only.yaml: the tokenizer has no chat template \(a base model\), so "
                                         r"the template needs a plain: part"):
        check("causal-lm", tiny_qwen2_base, None, "sentence", src_lang="en", tgt_lang="de", template=str(own))


def test_the_decode_cli_takes_a_template_of_ones_own(tiny_llama, tmp_path):
    """The workflow's decode rules pass models.template as --template (it was refused: 'unrecognized arguments')."""
    from docnmt.decode import cli

    own = tmp_path / "chat-only.yaml"
    own.write_text(CHAT_ONLY, encoding="utf-8")
    (tmp_path / "src").write_text("It is late.\nWhere is the train?\n", encoding="utf-8")
    (tmp_path / "ids").write_text("d1\nd1\n", encoding="utf-8")
    outputs = {name: str(tmp_path / name) for name in ("out.bpe", "out.txt", "out.json")}
    assert cli.main(["--strategy", "doc-trans", "--doc-trans-mode", "sequential", "--backend", "causal-lm",
                     "--model", str(tiny_llama), "--src", str(tmp_path / "src"), "--docids", str(tmp_path / "ids"),
                     "--src-lang", "en", "--tgt-lang", "de", "--template", str(own), "--beam", "1",
                     "--max-len-b", "30", "--output-bpe", outputs["out.bpe"], "--output", outputs["out.txt"],
                     "--sidecar", outputs["out.json"]]) == 0
    sidecar = json.loads((tmp_path / "out.json").read_text())
    assert sidecar["template"] == "chat-only.yaml" and sidecar["sentences"] == 2


def test_translate_prompts_with_a_template_of_ones_own(tiny_llama, tmp_path, monkeypatch):
    """docnmt-translate --template FILE: the model it loads prompts with that template (its system turn, the
    languages named), and its translations are the Python API's with the same template, not those of the default
    template."""
    from helpers import captured

    from docnmt.decode import translate
    from docnmt.decode.backends import load_model, make_searcher

    own = tmp_path / "chat-only.yaml"
    own.write_text(CHAT_ONLY, encoding="utf-8")
    documents = [["It is late.", "Where is the train?"], ["Excuse me."]]
    (tmp_path / "talks.txt").write_text("\n".join("".join(s + "\n" for s in doc) for doc in documents),
                                        encoding="utf-8")
    loaded = captured(monkeypatch, "docnmt.decode.backends.load_model")
    assert translate.main(["--backend", "causal-lm", "--document-model", str(tiny_llama), "--src-lang", "en",
                           "--tgt-lang", "de", "--template", str(own), "--input", str(tmp_path / "talks.txt"),
                           "--output", str(tmp_path / "out.txt"), "--beam", "1", "--max-len-b", "30",
                           "--device", "cpu"]) == 0
    (model,) = loaded
    assert model.template.path == own
    assert model.prompter.messages([], "It is late.")[0] == {"role": "system",
                                                              "content": "Render the English lines in German."}
    docs = group([s for doc in documents for s in doc], [f"d{n}" for n, doc in enumerate(documents) for _ in doc])

    def api(template):
        model = load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu", template=template)
        return REGISTRY["doc-trans"](Decoder(make_searcher(model, beam=1, max_len=30), k=3, h=12), docs)

    written = [block.splitlines() for block in (tmp_path / "out.txt").read_text(encoding="utf-8").split("\n\n")]
    assert written == api(str(own))
    assert written != api(None), "the default template (the one the tiny model was trained with) prompts otherwise"


def test_mbr_stays_near_the_beams_output_on_the_tiny_llm(llama_model):
    """chrF-MBR over 12 beam candidates keeps complete answers, each weighted by its probability: on the tests' tiny
    Llama its BLEU stays within 5 of the beam's best (uniform weights over every candidate, run-ons included, lost
    10-12 BLEU on this model, and 18-23 on make demo-llm's)."""
    import llmmodel
    import sacrebleu

    from docnmt.decode.backends import make_searcher
    from docnmt.decode.mbr import Settings
    from docnmt.decode.selection import Selector

    _, test = llmmodel.demo_documents()
    docs = group([s for d in test for s in d.src], [d.docid for d in test for _ in d.src],
                 ref=[t for d in test for t in d.tgt])
    refs = [t for d in docs for t in d.ref]
    for strategy in ("sentence-level", "doc-trans"):
        bleu = {}
        for selector in (None, Selector(Settings())):
            decoder = Decoder(make_searcher(llama_model, beam=12, max_len=60), k=3, h=1, mbr=selector)
            out = [s for d in REGISTRY[strategy](decoder, docs) for s in d]
            bleu["mbr" if selector else "beam"] = sacrebleu.corpus_bleu(out, [refs]).score
        assert abs(bleu["mbr"] - bleu["beam"]) <= 5, (strategy, bleu)
        assert selector.record()["incomplete_left_out"] > 0, "the n-best holds run-on answers"


# ---- the prefix cache, bounded in bytes --------------------------------------------------------------------------
def _filled(model, ids):
    """The model's keys and values of ``ids`` (a transformers cache of one row)."""
    import torch
    from transformers.cache_utils import DynamicCache

    cache = DynamicCache(config=model.net.config)
    with torch.no_grad():
        model.net(input_ids=torch.tensor([ids]), use_cache=True, **{model.cache_keyword: cache})
    return cache


def test_the_prefix_cache_finds_the_longest_shared_prefix_holds_views_and_keeps_within_its_bytes(llama_model):
    """PrefixCache: the longest prefix any held prompt shares (a trie walk), a view of its keys and values (the same
    storage, nothing copied) that the caller may grow without changing what is held, least recently used prompts
    dropped to stay within the limit, and a cache larger than the limit not kept."""
    from docnmt.decode.backends.causal_lm.prefix_cache import PrefixCache, cache_bytes

    model = llama_model
    prompts = {name: list(range(10, 10 + n)) + extra for name, n, extra in
               (("a", 30, [1, 2, 3]), ("b", 30, [4, 5]), ("c", 12, [7] * 20), ("d", 40, []))}
    caches = {name: _filled(model, ids) for name, ids in prompts.items()}
    one = cache_bytes(caches["a"]) // 33  # bytes per position
    held = PrefixCache(limit=one * 70)
    held.keep(prompts["a"], caches["a"])
    held.keep(prompts["b"], caches["b"])  # 33 + 32 positions: both fit
    assert len(held) == 2 and held.bytes == one * 65
    length, view = held.longest(list(range(10, 40)) + [4, 5, 6])
    assert length == 32 and view.get_seq_length() == 32  # b's 32 positions
    stored = held.held[max(held.held)][1]
    assert view.layers[0].keys.data_ptr() == stored.layers[0].keys.data_ptr(), "a view, not a copy"
    view.update(view.layers[0].keys[..., -1:, :], view.layers[0].values[..., -1:, :], 0)  # the caller grows its view
    assert stored.get_seq_length() == 32 and held.longest(prompts["b"] + [9])[0] == 32, "what is held is unchanged"
    assert held.longest([99, 10, 11])[0] == 0 and held.longest([10, 11, 12, 13])[0] == 4
    held.keep(prompts["c"], caches["c"])  # 32 more: a (used least recently) goes
    assert len(held) == 2 and held.bytes == one * 64 <= held.limit and held.evicted == 1
    assert held.longest(prompts["a"])[0] == 30, "a's own positions went; b shares its first 30"
    assert held.longest([10] * 5)[0] == 1
    too_big = PrefixCache(limit=one * 20)
    too_big.keep(prompts["d"], caches["d"])
    assert len(too_big) == 0 and too_big.bytes == 0 and too_big.longest(prompts["d"]) == (0, None)
    assert held.peak == one * 65


def test_a_small_cache_limit_changes_no_output_and_holds_within_it(llama_model, sample_docs):
    """doc-trans with a prefix cache of a few prompts: the same translations as without a cache, the cache's bytes
    never over the limit (cache_bytes_peak), fewer tokens read from the cache than with the default limit."""
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    def run(**options):
        searcher = CausalLMSearcher(llama_model, beam=1, max_new_tokens=40, **options)
        out = REGISTRY["doc-trans"](Decoder(searcher, k=3, h=1, doc_trans_mode="sequential"), sample_docs)
        return out, searcher

    plain, _ = run(reuse_cache=False)
    default, roomy = run()
    limit = 2 * roomy.cache_bytes_peak // len(roomy.cache)  # about two prompts' keys and values
    small, tight = run(cache_bytes=limit)
    none, nothing = run(cache_bytes=0)
    assert small == default == plain == none
    assert 0 < tight.cache_bytes_peak <= limit < roomy.cache_bytes_peak and tight.cache.evicted > 0
    assert nothing.tokens_cached == 0 < tight.tokens_cached < roomy.tokens_cached


def test_the_cache_limit_is_an_option_of_the_causal_lms_only(tiny_llama, tmp_path, capsys):
    """--cache-bytes: sizes with binary suffixes, reaching the sidecar; refused for a backend without a prefix
    cache and for a size that is not one."""
    from docnmt.decode import cli as decode_cli
    from docnmt.decode.arguments import byte_size

    assert (byte_size("512M"), byte_size("1.5G"), byte_size("2048"), byte_size("4KiB")) == \
        (512 << 20, 3 << 29, 2048, 4096)
    (tmp_path / "src").write_text("The lamp is old.\nIt is bright.\n", encoding="utf-8")
    (tmp_path / "ids").write_text("a\na\n", encoding="utf-8")
    common = ["--strategy", "doc-trans", "--src", str(tmp_path / "src"), "--docids", str(tmp_path / "ids"),
              "--beam", "1", "--max-len-b", "20", "--tgt-lang", "de", "--output-bpe", str(tmp_path / "o.bpe"),
              "--output", str(tmp_path / "o.txt"), "--sidecar", str(tmp_path / "o.json")]
    assert decode_cli.main(common + ["--backend", "causal-lm", "--model", str(tiny_llama), "--src-lang", "en",
                                     "--cache-bytes", "1M"]) == 0
    record = json.loads((tmp_path / "o.json").read_text())["prefix_cache"]
    assert record["limit_bytes"] == 1 << 20 and 0 < record["bytes_peak"] <= 1 << 20
    for extra, message in ((["--model", "x.pt", "--data", str(tmp_path), "--cache-bytes", "1G"],
                            "--cache-bytes bounds a prefix cache held across requests; fairseq models hold none"),
                           (["--backend", "causal-lm", "--model", str(tiny_llama), "--cache-bytes", "lots"],
                            "expected a size in bytes such as 2G or 512M, found 'lots'")):
        with pytest.raises(SystemExit):
            decode_cli.main(common + extra)
        assert message in capsys.readouterr().err


# ---- log-probabilities at a stop string ----------------------------------------------------------------------------
def test_an_answer_stopped_by_a_stop_string_has_the_log_prob_of_its_own_tokens(tiny_qwen2_base, sample_docs,
                                                                               monkeypatch):
    """A base model's plain template ends an answer with a stop string (a blank line). In a batch, generate fills a
    row that stopped with pad tokens while the others go on, and this model's pad token is an end token. The
    answer's tokens and log-prob are those up to the stop, as a forced-scoring pass on the same tokens after the
    same prompt gives them, greedy and sampled (before, the pad was taken for the answer's end token and its
    log-prob, about -17 nats, was added)."""
    from docnmt.decode.backends import load_model
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.requests import Request

    model = load_model("causal-lm", tiny_qwen2_base, src_lang="en", tgt_lang="de", device="cpu", template="translate")
    stop = model.prompter.answer_end
    assert model.pad in model.ends
    answers, pairs = [], []
    hypothesis = model.hypothesis

    def recorded(answer, score, logprob, lines=1):
        answers.append((list(answer), logprob))
        return hypothesis(answer, score, logprob, lines)

    monkeypatch.setattr(model, "hypothesis", recorded)
    searcher = CausalLMSearcher(model, beam=1, max_new_tokens=30, reuse_cache=False)
    generate = searcher.generate

    def paired(prompts, limit, copies=1, **options):  # each row's prompt with its answer
        start = len(answers)
        found = generate(prompts, limit, copies=copies, **options)
        pairs.extend(zip([p for p in prompts for _ in range(copies)], answers[start:]))
        return found

    monkeypatch.setattr(searcher, "generate", paired)
    requests = [Request(model.encode(s, source=True), []) for d in sample_docs for s in d.src]
    searcher.search(requests)
    searcher.sample(requests[0], 6, 0.02, seed=3)
    assert len(pairs) == len(requests) + 6
    stopped = set()
    for prompt, (answer, logprob) in pairs:
        text = model.tokenizer.decode(answer)
        assert not set(answer) & set(model.ends), "no end token, no pad"
        if text.endswith(stop):
            stopped.add(len(answer))
        forced = model.scored(prompt + answer[:-1], answer)
        assert logprob == pytest.approx(forced.logprob, abs=2e-4), (text, logprob, forced.logprob)
    assert len(stopped) >= 3, "answers of several lengths ended by the stop string while their batch went on"


# ---- a batch that runs out of memory --------------------------------------------------------------------------------
def sentence_level_decode(model, folder, name, *extra):
    """docnmt.decode.cli's sentence-level decode of ``folder``'s src and ids with a causal LM (beam 2, no journal):
    the text of its output and its sidecar."""
    from docnmt.decode import cli as decode_cli

    assert decode_cli.main(["--strategy", "sentence-level", "--backend", "causal-lm", "--model", str(model),
                            "--src", str(folder / "src"), "--docids", str(folder / "ids"), "--beam", "2",
                            "--max-len-b", "20", "--src-lang", "en", "--tgt-lang", "de", "--no-journal", *extra,
                            "--output-bpe", str(folder / f"{name}.bpe"), "--output", str(folder / f"{name}.txt"),
                            "--sidecar", str(folder / f"{name}.json")]) == 0
    return (folder / f"{name}.txt").read_text(), json.loads((folder / f"{name}.json").read_text())


def test_a_batch_that_runs_out_of_memory_is_split_and_the_output_is_the_same(tiny_llama, tmp_path, monkeypatch):
    """torch.OutOfMemoryError injected into every batch of more than two requests (as a GPU raises it): each is split
    in two until it fits; the decode's output equals the run without the error, and its sidecar counts the splits.
    A single request that runs out of memory ends the decode with one line naming its positions and --max-tokens."""
    import torch

    from docnmt.decode import cli as decode_cli
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    (tmp_path / "src").write_text("The lamp is old.\nIt is bright.\nI like it.\nAre you coming?\nYes, gladly.\n"
                                  "See you tomorrow.\nThe table is new.\n", encoding="utf-8")
    (tmp_path / "ids").write_text("a\na\na\nb\nb\nb\nb\n", encoding="utf-8")

    def decode(name, *extra):
        return sentence_level_decode(tiny_llama, tmp_path, name, *extra)

    whole, whole_car = decode("whole")
    generate = CausalLMSearcher.generate
    sizes = []

    def short_of_memory(self, prompts, *args, **kwargs):
        sizes.append(len(prompts))
        if len(prompts) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return generate(self, prompts, *args, **kwargs)

    monkeypatch.setattr(CausalLMSearcher, "generate", short_of_memory)
    split, split_car = decode("split")
    assert split == whole and whole_car["oom_splits"] == 0
    assert sizes == [7, 3, 1, 2, 4, 2, 2] and split_car["oom_splits"] == 3  # 7 -> 3 + 4, 3 -> 1 + 2, 4 -> 2 + 2

    def never(self, prompts, *args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory")

    monkeypatch.setattr(CausalLMSearcher, "generate", never)
    with pytest.raises(InputError, match=r"request \d: one request of \d+ positions \(beam x \(source or prompt \+ "
                                         r"prefix \+ answer limit\)\) runs out of the device's memory alone "
                                         r"\(--max-tokens 32768 bounds batches, not a request\)"):
        decode_cli.main.__wrapped__(["--strategy", "sentence-level", "--backend", "causal-lm", "--model",
                                     str(tiny_llama), "--src", str(tmp_path / "src"), "--docids", str(tmp_path / "ids"),
                                     "--tgt-lang", "de", "--src-lang", "en", "--no-journal", "--output-bpe",
                                     str(tmp_path / "x.bpe"), "--output", str(tmp_path / "x.txt"), "--sidecar",
                                     str(tmp_path / "x.json")])
    assert not (tmp_path / "x.txt").exists()


def test_only_lines_translates_a_ctxpro_sets_sentences_alone_as_a_whole_decode_does(tiny_llama, tmp_path):
    """A ctxpro set's documents (context, then the example's sentence) on a causal LM: with --only-lines,
    sentence-level prompts only the examples' sentences, each answered as in a decode of every line, and leaves the
    context lines empty."""
    (tmp_path / "src").write_text("The lamp is old.\nIt is bright.\nHi Tom!\nAre you coming?\nSee you tomorrow.\n",
                                  encoding="utf-8")
    (tmp_path / "ids").write_text("ctxpro-1\nctxpro-1\nctxpro-2\nctxpro-2\nctxpro-2\n", encoding="utf-8")
    (tmp_path / "examples.jsonl").write_text('{"line": 1}\n{"line": 4}\n', encoding="utf-8")

    whole, _ = sentence_level_decode(tiny_llama, tmp_path, "whole")
    only, sidecar = sentence_level_decode(tiny_llama, tmp_path, "only", "--only-lines", str(tmp_path / "examples.jsonl"))
    whole, only = whole.splitlines(), only.splitlines()
    assert [only[1], only[4]] == [whole[1], whole[4]] and all(whole)
    assert only[0] == only[2] == only[3] == "" and sidecar["requests"] == 2 and sidecar["only_lines"]["lines"] == 2
