"""refine's prompt and its decode on the prompting backends: the refine template's slots (each missing one an error
naming the file and the slot), the message a chat model and a base model see, the served model's messages against
causal-lm's, and docnmt-decode and docnmt-translate with refine on the tiny Llama (one line per sentence, the sidecar's
record, the refusals in one line with nothing written)."""

import json

import pytest

from docnmt.decode.documents import group
from docnmt.decode.prompting.refinement import Refiner, load_refine_template
from docnmt.textio import InputError

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"llama_model"}
SOURCE = ["It is late.", "Where is the train?", "Excuse me."]
DRAFT = ["Es ist spät.", "Wo ist der Zug?", "Entschuldigung."]


@pytest.fixture(scope="module")
def llama_model(tiny_llama):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")


GOOD = {"system": "Improve {target_language}.", "sentence": "{document}|{draft_document}|{source}|{draft}",
        "document": "{source}|{draft}"}


@pytest.mark.parametrize("unit, slot", [("sentence", "document"), ("sentence", "draft_document"),
                                        ("sentence", "source"), ("sentence", "draft"), ("document", "draft")])
def test_a_refine_template_without_a_slot_is_an_error_naming_the_file_and_the_slot(tmp_path, unit, slot):
    path = tmp_path / "mine.yaml"
    path.write_text(json.dumps({**GOOD, unit: GOOD[unit].replace(f"{{{slot}}}", "")}), encoding="utf-8")
    with pytest.raises(InputError, match=rf"mine\.yaml: the refine template's {unit} lacks the slot \{{{slot}\}}"):
        load_refine_template(path)


@pytest.mark.parametrize("text, message", [("[1, 2]", "expected a refine template"),
                                           ('{"sentence": "{x}"}', "unknown key|lacks|expected the key"),
                                           ("a: [", "not YAML"),
                                           (json.dumps({**GOOD, "extra": 1}), "unknown key 'extra'"),
                                           (json.dumps({**GOOD, "plain": {"start": ""}}), "start and assistant")])
def test_a_malformed_refine_template_is_an_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=rf"bad\.yaml: .*({message})"):
        load_refine_template(path)
    with pytest.raises(InputError, match="no such refine template.*improve"):
        load_refine_template(tmp_path / "missing.yaml")


def test_the_repositorys_template_holds_the_document_the_draft_and_the_sentence_for_a_chat_model(llama_model):
    refiner = llama_model.refiner
    assert refiner.chat and refiner.template.path.name == "improve.yaml"
    text = refiner.text(SOURCE[1:2], DRAFT[1:2], SOURCE, DRAFT)
    assert text.startswith("<|im_start|>system\nYou improve translations from English into German.")
    assert "\n".join(SOURCE) in text and "\n".join(DRAFT) in text and text.endswith("<|im_start|>assistant\n")
    assert "this sentence of the document:\nWhere is the train?\nDraft: Wo ist der Zug?" in text
    whole = refiner.text(SOURCE, DRAFT)  # the document unit: the whole draft, without the sentence's message
    assert "one line for each line.\nIt is late.\nWhere is the train?\nExcuse me.\n\nDraft:\nEs ist spät." in whole


def test_a_base_model_gets_the_plain_form_and_a_chat_only_template_is_refused(tiny_qwen2_base, tmp_path):
    from docnmt.decode.backends import load_model

    base = load_model("causal-lm", tiny_qwen2_base, src_lang="en", tgt_lang="de", device="cpu",
                      template="translate")
    text = base.refiner.text(SOURCE[:1], DRAFT[:1], SOURCE, DRAFT)
    assert text.startswith("You improve translations from English into German.") and "<|im_start|>" not in text
    assert text.endswith("Draft: Es ist spät.\n\nImproved German translation:\n")
    chat_only = tmp_path / "chat.yaml"
    chat_only.write_text(json.dumps(GOOD), encoding="utf-8")
    with pytest.raises(InputError, match=r"chat\.yaml: the tokenizer has no chat template.*plain"):
        Refiner(base.tokenizer, load_refine_template(chat_only), "en", "de")


def test_a_served_models_refine_messages_are_what_causal_lm_renders(llama_model):
    from docnmt.decode.backends.openai.endpoint import Settings
    from docnmt.decode.backends.openai.model import ServedModel

    served = ServedModel("my-llm", Settings.of("http://127.0.0.1:9/v1"), src_lang="en", tgt_lang="de")
    ids = lambda model, sentences: model.encode(" <sep> ".join(sentences), source=True)  # noqa: E731
    messages = served.messages(ids(served, SOURCE[1:2]), [], ids(served, SOURCE), ids(served, DRAFT[1:2]),
                               ids(served, DRAFT))
    rendered = llama_model.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    prompt = llama_model.conversation(ids(llama_model, SOURCE[1:2]), [], ids(llama_model, SOURCE),
                                      ids(llama_model, DRAFT[1:2]), ids(llama_model, DRAFT))
    assert llama_model.tokenizer(rendered, add_special_tokens=False)["input_ids"] == prompt


def _decode(tmp_path, model, strategy, *more, name=None):
    from docnmt.decode import cli

    out = tmp_path / (name or strategy)
    return cli.main(["--backend", "causal-lm", "--strategy", strategy, "--model", str(model), "--src",
                     str(tmp_path / "src"), "--docids", str(tmp_path / "docids"), "--src-lang", "en", "--tgt-lang",
                     "de", "--beam", "1", "--max-len-b", "40", "--output-bpe", f"{out}.bpe", "--output", f"{out}.txt",
                     "--sidecar", f"{out}.json", "--no-journal", *more])


@pytest.fixture(scope="module")
def refined(tiny_llama, tmp_path_factory):
    """The demo's first two test documents (10 sentences, with references) decoded on the tiny Llama by full-segment,
    then refined from that draft: the sentence unit in one round, the document unit in two (the folder)."""
    import llmmodel

    folder = tmp_path_factory.mktemp("refined")
    _, docs = llmmodel.demo_documents()
    pairs = [(s, t, d.docid) for d in docs[:2] for s, t in zip(d.src, d.tgt)][:10]
    for name, column in (("src", 0), ("ref", 1), ("docids", 2)):
        (folder / name).write_text("".join(pair[column] + "\n" for pair in pairs), encoding="utf-8")
    assert _decode(folder, tiny_llama, "full-segment") == 0
    draft = ["--draft", str(folder / "full-segment.bpe"), "--draft-sidecar", str(folder / "full-segment.json")]
    assert _decode(folder, tiny_llama, "refine", *draft) == 0
    assert _decode(folder, tiny_llama, "refine", *draft, "--refine-unit", "document", "--refine-rounds", "2",
                   name="refine-document") == 0
    return folder


@pytest.mark.parametrize("name, unit, rounds", [("refine", "sentence", 1), ("refine-document", "document", 2)])
def test_the_decode_cli_refines_a_full_segment_draft_on_the_tiny_llama(refined, name, unit, rounds):
    src = (refined / "src").read_text(encoding="utf-8").split("\n")[:-1]
    draft = (refined / "full-segment.bpe").read_text(encoding="utf-8").split("\n")[:-1]
    out = (refined / f"{name}.bpe").read_text(encoding="utf-8").split("\n")[:-1]
    sidecar = json.loads((refined / f"{name}.json").read_text())
    assert len(out) == len(src), "one line per sentence"
    record = sidecar["refine"]
    assert (record["unit"], record["rounds"], record["template"]) == (unit, rounds, "improve.yaml")
    assert record["draft_cost"]["strategy"] == "full-segment" and sidecar["tokens_generated"] > 0
    assert sidecar["rounds"] == rounds
    kept = [line - 1 for line in record["kept_draft_lines"]]
    if rounds == 1:  # (a later round keeps the earlier round's output, not the draft's)
        assert all(out[i] == draft[i] for i in kept)
    assert len(kept) == record["kept_draft"] and all(out[i].strip() for i in set(range(len(src))) - set(kept))


def test_refine_is_refused_without_its_draft_and_its_options_for_other_strategies(tiny_llama, refined, capsys):
    for strategy, more, message in (("refine", [], "refine needs --draft"),
                                    ("doc-trans", ["--draft", str(refined / "src")], "--draft is refine's option")):
        with pytest.raises(SystemExit):
            _decode(refined, tiny_llama, strategy, *more, name="refused")
        assert message in capsys.readouterr().err and not list(refined.glob("refused*"))


def test_refines_cxmi_is_its_prompt_against_the_sentence_alone_and_exact_for_one_sentence_round(
        tiny_llama, llama_model, refined, capsys):
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.requests import Request
    from docnmt.score import cxmi

    def run(*more):
        return cxmi.main(["--backend", "causal-lm", "--model", str(tiny_llama), "--src-lang", "en", "--tgt-lang", "de",
                          "--src", str(refined / "src"), "--ref", str(refined / "ref"), "--docids",
                          str(refined / "docids"), "--output", str(refined / "cxmi.json"), "--sentences",
                          str(refined / "cxmi.tsv"), *more])

    draft = str(refined / "full-segment.bpe")
    assert run("--system", f"refine={refined / 'refine.bpe'}", "--draft", draft, "--refine-sidecar",
               str(refined / "refine.json")) == 0
    found = json.loads((refined / "cxmi.json").read_text())["strategies"]["refine"]
    assert found["exact"] is True
    rows = (refined / "cxmi.tsv").read_text(encoding="utf-8").split("\n")
    column = rows[0].split("\t").index("p_cxmi[refine]")
    # by hand, line 2: the refinement's log-prob after refine's prompt, less after the sentence's own turn
    first = (refined / "docids").read_text(encoding="utf-8").split("\n").count("demo-test-00000")  # its sentences
    src = (refined / "src").read_text(encoding="utf-8").split("\n")[:first]
    drafts = open(draft, encoding="utf-8").read().split("\n")[:first]
    hyp = (refined / "refine.bpe").read_text(encoding="utf-8").split("\n")[1]
    model, ids = llama_model, lambda texts: llama_model.encode(" <sep> ".join(texts), source=True)  # noqa: E731
    searcher = CausalLMSearcher(model, beam=1)
    refine = Request(ids([src[1]]), [], ids(src), refining=ids([drafts[1]]), draft_document=ids(drafts))
    a, b = searcher.score_forced([refine, Request(ids([src[1]]), [])], [model.encode(hyp)[:-1]] * 2)
    assert float(rows[2].split("\t")[column]) == pytest.approx(a.logprob - b.logprob, abs=1e-4)
    # the document unit in two rounds: scored after the sentence unit's prompt, marked approximate
    assert run("--system", f"refine={refined / 'refine-document.bpe'}", "--draft", draft, "--refine-sidecar",
               str(refined / "refine-document.json")) == 0
    assert json.loads((refined / "cxmi.json").read_text())["strategies"]["refine"]["exact"] is False
    assert "(approximate context)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        run("--system", f"refine={refined / 'refine.bpe'}")
    assert "refine needs --draft" in capsys.readouterr().err


def test_a_refine_template_without_a_slot_stops_the_decode_before_anything_is_written(tiny_llama, tmp_path, capsys):
    (tmp_path / "src").write_text("It is late.\n", encoding="utf-8")
    (tmp_path / "docids").write_text("d\n", encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps({**GOOD, "sentence": "{document} {source} {draft}"}), encoding="utf-8")
    with pytest.raises(SystemExit):
        _decode(tmp_path, tiny_llama, "refine", "--draft", str(tmp_path / "src"), "--refine-template", str(bad))
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"error: {bad}: the refine template's sentence lacks the slot {{draft_document}}"
    assert not list(tmp_path.glob("refine*"))


def test_refine_is_one_line_on_models_without_a_conversation(tmp_path, capsys):
    from docnmt.decode import cli, translate

    for main, args in ((cli.main, ["--strategy", "refine", "--model", str(tmp_path / "m.pt"), "--data",
                                   str(tmp_path), "--src", str(tmp_path / "s"), "--docids", str(tmp_path / "d"),
                                   "--tgt-lang", "de", "--output-bpe", "o", "--output", "o", "--sidecar", "o"]),
                       (translate.main, ["--strategy", "refine", "--backend", "transformers", "--document-model",
                                         str(tmp_path), "--input", str(tmp_path / "x"), "--output", "o"])):
        (tmp_path / "s").write_text("a\n")
        (tmp_path / "d").write_text("x\n")
        with pytest.raises(SystemExit):
            main(args)
        err = capsys.readouterr().err.strip().splitlines()
        assert "refine is for causal-lm, vllm or openai models, whose prompt is a conversation" in err[-1]


def test_translate_refines_its_own_draft(tiny_llama, tmp_path):
    from docnmt.decode import translate

    talks = tmp_path / "talks.txt"
    talks.write_text("It is late.\nWhere is the train?\n\nExcuse me.\nI am looking for a sweater.\n", encoding="utf-8")
    for draft, more in (("full-segment", []), ("doc-trans", ["--refine-unit", "document", "--refine-rounds", "2",
                                                              "--refine-template", "improve", "--no-verify-drafts"])):
        out = tmp_path / f"{draft}.txt"
        assert translate.main(["--backend", "causal-lm", "--document-model", str(tiny_llama), "--src-lang", "en",
                               "--tgt-lang", "de", "--strategy", "refine", "--refine-draft", draft, "--input",
                               str(talks), "--output", str(out), "--beam", "1", "--max-len-b", "40", *more]) == 0
        lines = out.read_text(encoding="utf-8").split("\n")
        assert lines[2] == "" and len(lines) == 6 and all(lines[i] for i in (0, 1, 3, 4)), lines


def test_speculative_ngram_on_a_backend_without_it_is_one_line_and_writes_nothing(tiny_llama, refined, tmp_path,
                                                                                   capsys):
    """--speculative ngram is vLLM's engine's: docnmt-decode and docnmt-translate on causal-lm stop with one line
    before loading the model, and write nothing; with MBR's epsilon samples the decode stops too."""
    from docnmt.decode import translate

    expected = "--speculative: speculative decoding 'ngram' is for vllm models, not causal-lm"
    with pytest.raises(SystemExit):
        _decode(refined, tiny_llama, "doc-trans", "--speculative", "ngram", name="speculative")
    err = capsys.readouterr().err.strip().splitlines()
    assert expected in err[-1] and not list(refined.glob("speculative*"))
    talks = tmp_path / "talks.txt"
    talks.write_text("It is late.\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        translate.main(["--backend", "causal-lm", "--document-model", str(tiny_llama), "--src-lang", "en",
                        "--tgt-lang", "de", "--strategy", "doc-trans", "--input", str(talks), "--output",
                        str(tmp_path / "out.txt"), "--speculative", "ngram"])
    err = capsys.readouterr().err.strip().splitlines()
    assert expected in err[-1] and not (tmp_path / "out.txt").exists()
    with pytest.raises(SystemExit):
        _decode(refined, tiny_llama, "doc-trans", "--speculative", "ngram", "--mbr", "--mbr-candidates", "sampling",
                "--mbr-seed", "1", name="speculative")
    err = capsys.readouterr().err.strip().splitlines()
    assert "epsilon sampling (--mbr-candidates sampling) is one" in err[-1] and not list(refined.glob("speculative*"))


def test_refine_searches_each_documents_sentences_in_one_call_with_the_reused_cache(llama_model):
    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.strategies import REGISTRY, Decoder

    docs = group(SOURCE, ["d"] * 3, draft=DRAFT)
    outs = []
    for reuse in (True, False):
        searcher = CausalLMSearcher(llama_model, beam=1, max_new_tokens=40, reuse_cache=reuse,
                                    batch_size=64 if reuse else 1)
        outs.append(REGISTRY["refine"](Decoder(searcher, k=3, h=1), docs))
        if reuse:  # the document and its draft open every prompt: prefilled once, then read from the cache
            assert searcher.tokens_cached > 0
    assert outs[0] == outs[1] and len(outs[0][0]) == 3


def test_the_decoding_pages_refine_command_runs_as_written_and_verifies_its_draft(tiny_llama, refined, tmp_path):
    """docs/decoding.md's `docnmt-decode ... --strategy refine`, as written, with the tiny Llama as my-llm and the
    refined fixture's files: at beam 1 its draft is verified as the answer's draft (the sidecar's drafts); with
    --no-verify-drafts the same refinements, nothing verified."""
    import subprocess

    from helpers import REPO, shell_commands, tool_env

    (command,) = shell_commands(REPO / "docs/decoding.md", "## refine")
    assert "--strategy refine" in command and "--draft full-segment.bpe" in command, command
    for name, target in (("my-llm", tiny_llama), ("test.en", refined / "src"), ("test.docids", refined / "docids"),
                         ("full-segment.bpe", refined / "full-segment.bpe"),
                         ("full-segment.json", refined / "full-segment.json")):
        (tmp_path / name).symlink_to(target)
    outputs = []
    for more in ("", " --no-verify-drafts"):
        result = subprocess.run(command + more, shell=True, cwd=tmp_path, env=tool_env(), capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]
        sidecar = json.loads((tmp_path / "refine.json").read_text())
        outputs.append((tmp_path / "refine.bpe").read_text(encoding="utf-8"))
        assert ("drafts" in sidecar) == (more == ""), sidecar.get("drafts")
    assert outputs[0] == outputs[1] == (refined / "refine.bpe").read_text(encoding="utf-8")
