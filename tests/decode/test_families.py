"""Every causal-LM family people translate with (docnmt.decode.backends.causal_lm.tiny.FAMILIES: Llama, Qwen2, Qwen3,
Mistral, Gemma 2, Gemma 3, Phi-3, Cohere2), each as a tiny model built here from its transformers config, with a
sliding window (24 tokens) where the family has one and a context window (128 tokens) that the tests' prompts
outgrow: docnmt-check-model passes, every strategy at beam 1 and beam 4 gives the same translations with the prefix
cache as without it (and with a cache too small to hold one prompt), forced scoring and MBR's samples too, and the
prefix cache holds views, never copies, of a sliding window's keys. On vLLM's CPU build, each family's greedy
translations equal causal-lm's (docs/own-models.md, "LLM families")."""

from __future__ import annotations

import pytest

from docnmt.decode.documents import context_k, group
from docnmt.decode.strategies import REGISTRY, Decoder

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from docnmt.decode.backends.causal_lm.tiny import FAMILIES  # noqa: E402
from helpers import REPO  # noqa: E402
from llmfamilies import CONTEXT, WINDOW, family_documents, family_folder  # noqa: E402

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"family", "family_model"}
#: the strategies a causal LM decodes with: the paper's nine and source-primed
STRATEGIES = list(REGISTRY)


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tmp_path_factory):
    """(architecture, the tiny model's folder) of each family."""
    return request.param, family_folder(tmp_path_factory, request.param)


@pytest.fixture(scope="module")
def family_model(family):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", family[1], src_lang="en", tgt_lang="de", device="cpu")


@pytest.fixture(scope="module")
def documents():
    """The first 4 sentences of two demo documents (tests/llmfamilies.py), the documents vllm_side decodes too."""
    return family_documents()


def decode(model, strategy: str, docs, beam: int, context: str = "window", **options):
    """A strategy's translations with the causal-lm searcher of these ``options`` (2-pass: after its first pass,
    refine: after its draft, sentence-level's with the same searcher), and the searcher and decoder."""
    import copy

    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher

    if strategy == "refine":  # its prompt holds the document and its draft: two sentences and a short template fit
        docs = [type(d)(d.docid, d.lines[:2], d.src[:2]) for d in docs]
        model.refine_template, model._refiner = str(REPO / "tests/data/refine-short.yaml"), None
    if strategy in ("2-pass", "refine"):
        first, _, _ = decode(model, "sentence-level", docs, beam, context, **options)
        docs = copy.deepcopy(docs)
        for doc, hyps in zip(docs, first):
            doc.first_pass = doc.draft = hyps
    options.setdefault("max_new_tokens", 16)
    searcher = CausalLMSearcher(model, beam=beam, **options)
    decoder = Decoder(searcher, k=context_k(context, 3, docs), h=2, sentence_searcher=searcher,
                      doc_trans_mode="sequential")
    return REGISTRY[strategy](decoder, docs), searcher, decoder


def test_the_tiny_models_are_the_families_with_their_windows(family, family_model):
    """Each tiny model is of its family, and the families with a sliding window have one of WINDOW tokens, shorter
    than every prompt of the tests."""
    architecture, _ = family
    config = family_model.net.config
    assert type(family_model.net).__name__ == FAMILIES[architecture]["model"]
    assert family_model.max_positions == CONTEXT
    if FAMILIES[architecture].get("window"):
        assert config.sliding_window == WINDOW
        assert len(family_model.conversation(family_model.encode("Hello.", source=True), [])) > WINDOW


def test_check_model_passes(family, tmp_path, capsys):
    from docnmt.decode import checks

    sample = tmp_path / "talk.txt"
    sample.write_text("It is late.\nWhere is the train?\n\nExcuse me.\n", encoding="utf-8")
    assert checks.main(["--backend", "causal-lm", "--model", str(family[1]), "--level", "document", "--k", "3",
                        "--src-lang", "en", "--tgt-lang", "de", "--sample", str(sample)]) == 0
    assert f"{family_model_type(family[1])} (causal LM)" in capsys.readouterr().out


def family_model_type(folder) -> str:
    import json

    return json.loads((folder / "config.json").read_text(encoding="utf-8"))["model_type"]


@pytest.mark.parametrize("beam", [1, 4])
def test_every_strategy_gives_the_same_translations_with_the_prefix_cache_as_without(family_model, documents, beam):
    """Every strategy, the prefix cache on (the default limit, and a limit too small to hold one prompt) and off
    (generate on each whole prompt, one request at a time): the same translations. At beam 1, doc-trans with the
    whole document as context outgrows the context window and drops its oldest turns, with the same translations."""
    for strategy in STRATEGIES:
        plain, _, _ = decode(family_model, strategy, documents, beam, reuse_cache=False, batch_size=1)
        cached, searcher, _ = decode(family_model, strategy, documents, beam)
        assert cached == plain, strategy
        assert searcher.tokens_cached > 0, strategy
        assert any(s for doc in cached for s in doc), f"{strategy}: every translation empty"
    if beam > 1:
        return
    tiny, searcher, _ = decode(family_model, "doc-trans", documents, beam, cache_bytes=64 << 10)
    assert tiny == decode(family_model, "doc-trans", documents, beam, reuse_cache=False, batch_size=1)[0]
    assert searcher.cache.bytes <= 64 << 10
    whole, _, decoder = decode(family_model, "doc-trans", documents, beam, context="document")
    assert decoder.stats.context_truncated > 0, "the document's conversation outgrows the context window"
    assert whole == decode(family_model, "doc-trans", documents, beam, context="document", reuse_cache=False,
                           batch_size=1)[0]


def test_forced_scoring_and_samples_are_the_same_with_the_prefix_cache_as_without(family_model, documents):
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.sampling import Sampler

    import llmmodel

    model = family_model
    requests, targets = llmmodel.forced_requests(model, documents[0], context=1)
    cached = CausalLMSearcher(model, reuse_cache=True).score_forced(requests, targets)
    plain = CausalLMSearcher(model, reuse_cache=False).score_forced(requests, targets)
    assert [s.logprob for s in cached] == pytest.approx([s.logprob for s in plain], abs=1e-4)
    assert all(s.logprob < 0 for s in cached)
    samples = {}
    for reuse in (True, False):
        searcher = CausalLMSearcher(model, beam=1, max_new_tokens=16, reuse_cache=reuse)
        samples[reuse] = REGISTRY["doc-trans"](Decoder(Sampler(searcher, 3, 0.02, 7), k=3, h=2), documents[:1])
    assert samples[True] == samples[False]


def test_the_prefix_cache_holds_views_of_a_sliding_windows_every_position(family_model):
    """A sliding-window layer was deep-copied (outside the byte limit) and could not be cropped to a shorter prefix
    once its window was full (issue 57, fault 1). Now it records its past, and what is held and read are views of
    one storage, counted in the limit, for every kind of layer."""
    from transformers.cache_utils import DynamicCache

    from docnmt.decode.backends.causal_lm.prefix_cache import PrefixCache, cache_bytes, recording

    model = family_model
    ids = list(range(10, 10 + 3 * WINDOW))
    cache = recording(DynamicCache(config=model.net.config))
    with torch.no_grad():
        model.net(input_ids=torch.tensor([ids]), use_cache=True, **{model.cache_keyword: cache})
    held = PrefixCache(limit=2 * cache_bytes(cache))
    held.keep(ids, cache)
    assert held.bytes == cache_bytes(cache), "every position of every layer is counted"
    length, view = held.longest(ids[:WINDOW + 5] + [1, 2])
    assert length == WINDOW + 5
    stored = held.held[max(held.held)][1]
    for mine, kept in zip(view.layers, stored.layers):
        assert mine.keys.untyped_storage().data_ptr() == kept.keys.untyped_storage().data_ptr(), "a view"
        assert mine.get_seq_length() == WINDOW + 5
    # the view continued gives what the prompt computed whole gives
    rest = [7, 8, 9]
    with torch.no_grad():
        continued = model.net(input_ids=torch.tensor([rest]), use_cache=True,
                              **{model.cache_keyword: view}).logits[0, -1]
        whole = model.net(input_ids=torch.tensor([ids[:WINDOW + 5] + rest])).logits[0, -1]
    assert torch.allclose(continued, whole, atol=1e-4)
    assert stored.get_seq_length() == len(ids), "what is held is unchanged"



# ---- on vLLM's CPU build ----------------------------------------------------------------------------------------
#: The families whose vLLM implementation reads the sliding window otherwise than transformers: vLLM's Cohere2 lets a
#: sliding layer see ``sliding_window + 1`` tokens (its model's comment: "cohere swa layer sees [pos - sliding_window,
#: pos]", the training convention), transformers' ``sliding_window``; so vLLM's translations equal causal-lm's on the
#: same weights with a window one token wider.
WIDER_ON_VLLM = {"cohere2": 1}


def widened(folder, tokens: int, where):
    """A copy of a model folder whose sliding window is ``tokens`` wider (the same weights)."""
    import json
    import shutil

    copy = where / f"{folder.parent.name}-wider"
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    config["sliding_window"] += tokens
    (copy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return copy


@pytest.mark.full  # make test-full: every vLLM family
def test_vllm_passes_the_check_and_translates_as_causal_lm_does(family, vllm_families, documents, tmp_path):
    """docnmt-check-model --backend vllm passes for every family, and vLLM's greedy translations (sentence-level,
    doc-trans) equal causal-lm's, with the window vLLM reads (:data:`WIDER_ON_VLLM`)."""
    from docnmt.decode.backends import load_model

    architecture, folder = family
    found = vllm_families[architecture]
    assert found["check"] == 0
    if architecture in WIDER_ON_VLLM:
        folder = widened(folder, WIDER_ON_VLLM[architecture], tmp_path)
    model = load_model("causal-lm", folder, src_lang="en", tgt_lang="de", device="cpu")
    for strategy in ("sentence-level", "doc-trans"):
        out, _, _ = decode(model, strategy, documents, 1, max_new_tokens=40)  # vllm_side's limit
        assert [s for doc in out for s in doc] == found[strategy], strategy


@pytest.mark.full  # make test-full: every vLLM family
def test_vllm_check_names_an_architecture_it_has_no_implementation_of(vllm_families):
    found = vllm_families["unknown-architecture"]
    assert found["status"] != 0
    (line,) = found["stderr"].strip().splitlines()
    assert "config.json: architecture TinyUnknownForCausalLM: vLLM" in line and "--backend causal-lm" in line



def test_the_tiny_cli_builds_any_family_with_its_windows(tmp_path, capsys):
    """``python -m docnmt.decode.backends.causal_lm.tiny --architecture NAME --window N --max-positions M``: the
    family's config with the sliding window and the context window asked for (0 updates: a random model)."""
    import json

    import llmmodel
    from docnmt.decode.backends.causal_lm import tiny

    docs, _ = llmmodel.demo_documents(5)
    for side in ("en", "de"):
        (tmp_path / f"train.{side}").write_text(
            "".join(f"{s}\n" for d in docs for s in (d.src if side == "en" else d.tgt)), encoding="utf-8")
    (tmp_path / "train.docids").write_text("".join(f"{d.docid}\n" for d in docs for _ in d.src), encoding="utf-8")
    assert tiny.main(["--train", str(tmp_path / "train"), "--output", str(tmp_path / "gemma3"), "--architecture",
                      "gemma3", "--window", "16", "--max-positions", "96", "--steps", "0", "--hidden", "64",
                      "--layers", "2"]) == 0
    config = json.loads((tmp_path / "gemma3" / "config.json").read_text(encoding="utf-8"))
    assert (config["model_type"], config["sliding_window"], config["max_position_embeddings"]) == \
        ("gemma3_text", 16, 96)
    assert config["layer_types"] == ["sliding_attention", "full_attention"]
    assert "a gemma3 of 2 layers, 0 updates" in capsys.readouterr().out
    # without --window: the family config's own (Cohere2's must be set: it was refused with None)
    assert tiny.main(["--train", str(tmp_path / "train"), "--output", str(tmp_path / "cohere2"), "--architecture",
                      "cohere2", "--steps", "0", "--hidden", "64", "--layers", "2"]) == 0
    config = json.loads((tmp_path / "cohere2" / "config.json").read_text(encoding="utf-8"))
    assert (config["model_type"], config["sliding_window"]) == ("cohere2", 4096)
    with pytest.raises(SystemExit):
        tiny.main(["--train", str(tmp_path / "train"), "--output", str(tmp_path / "x"), "--architecture", "gpt2"])


def test_a_model_whose_cache_layers_cannot_be_shared_decodes_without_the_prefix_cache(tmp_path):
    """Qwen3-Next's linear-attention layers hold a recurrent state, not keys and values a prefix can be cut from:
    the searcher says why its prefix cache is off and decodes as generate does on each whole prompt."""
    import transformers

    import llmmodel
    from docnmt.decode.backends import load_model
    from docnmt.decode.backends.causal_lm.tiny import build_tokenizer

    docs, test = llmmodel.demo_documents(5)
    tokenizer = build_tokenizer([s for d in docs for s in d.src + d.tgt] + ["English German"], tmp_path)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = transformers.Qwen3NextConfig(
        vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=2,
        num_key_value_heads=2, head_dim=32, max_position_embeddings=256, eos_token_id=[end, tokenizer.eos_token_id],
        pad_token_id=tokenizer.pad_token_id, bos_token_id=None, linear_num_value_heads=2, linear_num_key_heads=2,
        linear_key_head_dim=16, linear_value_head_dim=16, num_experts=2, num_experts_per_tok=1,
        moe_intermediate_size=32, shared_expert_intermediate_size=32)
    torch.manual_seed(1)
    net = transformers.Qwen3NextForCausalLM(config)
    net.generation_config.eos_token_id = [end, tokenizer.eos_token_id]
    net.save_pretrained(tmp_path)
    model = load_model("causal-lm", tmp_path, src_lang="en", tgt_lang="de", device="cpu")
    docs = group(test[0].src[:3], [test[0].docid] * 3, ref=test[0].tgt[:3])
    out, searcher, _ = decode(model, "doc-trans", docs, 2, max_new_tokens=8)
    assert searcher.cache_off == "its cache layers of kind LinearAttentionLayer cannot be shared between prompts"
    assert not searcher.reuse_cache and searcher.tokens_cached == 0 and len(searcher.cache) == 0
    assert out == decode(model, "doc-trans", docs, 2, max_new_tokens=8, reuse_cache=False, batch_size=1)[0]
