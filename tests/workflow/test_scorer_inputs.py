"""docnmt.workflow.score: each scorer's inputs and the options that name them."""

from docnmt import layout
from docnmt.workflow import score, systems
from wfconfigs import demo_config, external_config


def test_bleu_ter_scores_every_system_and_on_the_test_set_the_mbr_curve_and_documents():
    """The seam's rule of bleu_ter (docnmt.workflow.score): every system, the curve's and the document ids on the
    test set, the example lines on ContraPro, then the baselines, the bootstrap's samples and no options."""
    config = demo_config()
    inputs = score.metric_inputs(config, "bleu_ter", "demo", "test")
    names = systems.task_systems(config, "demo", "test")
    assert inputs["systems"] == [layout.decode_file("demo", "test", s, "txt") for s in names]
    assert "subsets" not in inputs
    args = score.metric_args(config, "bleu_ter", "demo", "test", inputs)
    assert args[:2] == ["--system", f"{names[0]}={inputs['systems'][0]}"]
    curve = systems.curve_systems(config, "demo")
    assert len(args) == 2 * (len(names) + len(curve)) + 2 + 6
    assert args[-8:] == ["--docids", inputs["docids"], "--baseline", "sentence-level", "--baseline", "last-sentence",
                         "--bootstrap-samples", "1000"]
    contrapro = score.metric_inputs(config, "bleu_ter", "demo", "contrapro")
    assert "docids" not in contrapro and contrapro["select"] == layout.contrapro_examples("demo")
    assert score.metric_args(config, "bleu_ter", "demo", "contrapro", contrapro)[-8:-6] == [
        "--select", contrapro["select"]]


def test_significance_baselines_are_those_the_task_decodes():
    config = demo_config(strategies=["sentence-level", "doc-trans"],
                         scoring={"significance_baselines": ["sentence-level", "2-pass"]})
    inputs = score.metric_inputs(config, "bleu_ter", "demo", "test")
    args = score.metric_args(config, "bleu_ter", "demo", "test", inputs)
    assert [args[i + 1] for i, a in enumerate(args) if a == "--baseline"] == ["sentence-level"]


def test_pronoun_f1_passes_the_subsets_file_where_there_is_one():
    assert score.subsets_arg({"subsets": "s"}) == ["--subsets", "s"] and score.subsets_arg({}) == []


def test_perplexity_scores_the_reference_and_the_levels_own_systems():
    config = demo_config()
    inputs = score.perplexity_inputs(config, "demo", "sentence")
    assert inputs["model"] == layout.model_file("demo", "sentence") and "checks" not in inputs
    assert inputs["systems"] == [layout.decode_file("demo", "test", s, "bpe") for s in ("sentence-level", "sentence-level+mbr")]
    assert score.perplexity_args(config, "demo", "sentence", inputs) == [
        "--system", f"reference={inputs['reference']}", "--system", f"sentence-level={inputs['systems'][0]}",
        "--system", f"sentence-level+mbr={inputs['systems'][1]}"]
    assert score.perplexity_inputs(external_config(), "mine", "document")["checks"] == layout.model_check("mine", "document")


def test_contrapro_accuracy_reads_the_model_data_examples_and_codes():
    inputs = score.contrapro_accuracy_inputs(demo_config(), "demo", "document")
    assert inputs == {"model": layout.model_file("demo", "document"), "data": layout.binarized("demo", "document"),
                      "src": layout.processed_file("demo", "bpe", "contrapro", "en"),
                      "tgt": layout.processed_file("demo", "bpe", "contrapro", "de"),
                      "examples": layout.contrapro_examples("demo"), "codes": layout.bpe_codes("demo")}


def test_cxmi_reads_both_models_and_what_each_context_needs():
    config = demo_config()
    inputs = score.cxmi_inputs(config, "demo", "test")
    assert inputs["sentence_model"] == layout.model_file("demo", "sentence")
    assert inputs["first_pass"] == layout.decode_file("demo", "test", "sentence-level", "bpe")
    assert inputs["last_sentence_sidecar"] == layout.decode_file("demo", "test", "last-sentence", "json")
    args = score.cxmi_args(config, "demo", "test", inputs)
    for key, option in score.CXMI_OPTIONS:
        assert (option in args) == (key in inputs), option
    hf = score.cxmi_inputs(external_config(), "mine-doc", "test")
    assert "sentence_model" not in hf and "first_pass" not in hf
    assert hf["checks"] == [layout.model_check("mine-doc", "document")]


def test_context_usage_adds_pronoun_f1_for_german_targets():
    config = demo_config()
    inputs = score.context_usage_inputs(config, "demo", "test")
    assert inputs["sentences"] == layout.cxmi_sentences("demo", "test") and "subsets" not in inputs
    args = score.context_usage_args(config, "demo", "test", inputs)
    assert args[args.index("--min-examples") + 1] == "30" and "--pronouns" in args
    config["task_settings"]["demo"]["tgt"] = "it"
    assert "--pronouns" not in score.context_usage_args(config, "demo", "test", inputs)
