"""docnmt.score.gemba against the ``gemba`` package itself (0.1.3, installed without its dependencies by make setup;
``ipdb``, a debugger its modules import and never call, is stood in for): the same prompts for the same inputs, the
same parsed scores on well-formed and malformed answers (but for the one documented difference), and the answers'
cache."""

from __future__ import annotations

import json
import sys
import types

import pytest

from docnmt.score import gemba as judge

INPUTS = [
    dict(source_lang="English", source_seg="I bought a bag yesterday. It was cheap.", target_lang="German",
         target_seg="Ich habe gestern eine Tasche gekauft. Sie war billig."),
    dict(source_lang="English", source_seg='Say "{hi}" to {name}!', target_lang="Italian",
         target_seg='Di\' "{ciao}" a {name}!\n```'),
]

MQM_ANSWERS = [
    'Critical:\nno-error\nMajor:\naccuracy/mistranslation - "Beutel"\nMinor:\nfluency/grammar - "kaufte"\n',
    "Major:\naccuracy/omission - \"cheap\"\naccuracy/addition - \"x\"\nMajor:\nstyle/awkward - \"y\"",
    "critical:\nnon-translation - everything\nmajor:\naccuracy/mistranslation - a\nmajor:\nfluency - b\nminor:\nother",
    "Critical:\naccuracy - a\naccuracy - b\n",
    "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\n",
    "Minor:\n" + "\n".join(f"fluency/punctuation - \"{i}\"" for i in range(8)),
    "accuracy/mistranslation - \"x\"\nMinor:\nstyle/awkward - \"y\"",
    '{"improved translation": "Ich kaufte.", "errors": {"major": [{"class": "accuracy"}], "minor": []}}',
    '{"improved translation": "Ich kaufte.", "errors": {"major": [{"class": "accuracy"}, {"class" "x"}]}}',
    # no error line and no severity heading: gemba says 0 (perfect), the project says unparsed
    "The translation is perfect.",
    "",
    "Die Lampe ist alt.",
]
NUMBER_ANSWERS = ["85", "Score: 72", "['90']", "40/100", "The score is 120.", "between 60 and 70", "", "none",
                  "  100", "-5", "0", "101/100", "[\"55\"]", "3.5"]


@pytest.fixture(scope="module")
def gemba():
    """gemba's modules, with ipdb (imported at their top, never called) stood in for."""
    pytest.importorskip("termcolor", reason="gemba's dependency termcolor is missing: run `make setup`")
    sys.modules.setdefault("ipdb", types.ModuleType("ipdb"))
    esa = pytest.importorskip("gemba.gemba_esa", reason="the gemba package is missing: run `make setup`")
    from gemba import gemba_mqm_utils, prompt

    return types.SimpleNamespace(esa=esa, mqm=gemba_mqm_utils, prompt=prompt)


@pytest.mark.parametrize("fields", INPUTS)
def test_the_prompts_are_gembas_for_the_same_inputs(gemba, fields):
    apply = gemba.mqm.apply_template
    assert judge.esa_spans_messages(**fields) == apply(gemba.esa.TEMPLATE_GEMBA_ESA_ERROR_SPANS, fields)
    spans = 'Major:\naccuracy/mistranslation - "Tasche"\nMinor:\nno-error'
    assert judge.esa_ranking_messages(**fields, error_spans=spans) == [
        {"role": "user", "content": apply(gemba.esa.TEMPLATE_GEMBA_ESA_RANKING, {**fields, "error_spans": spans})}]
    assert judge.mqm_messages(**fields) == apply(gemba.mqm.TEMPLATE_GEMBA_MQM, fields)


@pytest.mark.parametrize("answer", MQM_ANSWERS)
def test_mqm_answers_score_as_gemba_scores_them_but_an_answer_without_error_lines_is_unparsed(gemba, answer,
                                                                                            capsys):
    theirs, their_errors = gemba.mqm.parse_mqm_answer(answer, list_mqm_errors=True, full_desc=True, normalize=False)
    capsys.readouterr()  # gemba prints the lines it cannot place
    ours, errors = judge.parse_mqm(answer)
    lowered = answer.lower()
    has_lines = answer.startswith("{") or any(h in lowered.split("\n") for h in ("critical:", "major:", "minor:"))
    if has_lines:
        assert ours == theirs and -25 <= ours <= 0
        assert errors == {k: v for k, v in their_errors.items() if v} or answer.startswith("{")
    else:
        assert theirs == 0 and ours is None and errors == {}


def test_mqm_scores_follow_gembas_weights_count_and_cap():
    assert judge.parse_mqm(MQM_ANSWERS[0])[0] == -6
    assert judge.parse_mqm(MQM_ANSWERS[2])[0] == -25  # non-translation is critical; capped at 25
    assert judge.parse_mqm(MQM_ANSWERS[4])[0] == 0  # headings with no-error: a perfect translation, parsed
    assert judge.parse_mqm(MQM_ANSWERS[5])[0] == -5  # at most five errors counted
    assert judge.parse_mqm(None) == (None, {})


@pytest.mark.parametrize("answer", NUMBER_ANSWERS)
def test_esa_scores_are_read_as_gembas_validate_number_reads_them(gemba, answer):
    assert judge.parse_number(answer) == gemba.prompt.validate_number(answer)


def test_the_cache_keys_every_sampling_setting_and_resumes_after_a_cut_line(tmp_path):
    messages = [{"role": "user", "content": "x"}]
    key = judge.AnswerCache.key("http://h/v1", "m", messages, temperature=0.0, max_tokens=500)
    assert key != judge.AnswerCache.key("http://h/v1", "m", messages, temperature=0.1, max_tokens=500)
    assert key != judge.AnswerCache.key("http://h/v1", "m2", messages, temperature=0.0, max_tokens=500)
    assert key != judge.AnswerCache.key("http://other/v1", "m", messages, temperature=0.0, max_tokens=500)
    cache = judge.AnswerCache(tmp_path)
    cache.put(key, "85", "stop")
    cache.put("k2", "Major:\nx", "stop")
    with open(tmp_path / "answers.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"key": "k3", "ans')  # a kill in the middle of a line
    again = judge.AnswerCache(tmp_path)
    assert again.get(key) == {"key": key, "answer": "85", "finish": "stop"} and again.get("k3") is None
    again.put("k3", "90", "stop")  # asked again, and appended after the cut line was dropped
    assert judge.AnswerCache(tmp_path).get("k3")["answer"] == "90"
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "answers.jsonl").write_text("not json\n" + json.dumps({"key": "a", "answer": "", "finish": ""})
                                                    + "\n")
    from docnmt.textio import InputError

    with pytest.raises(InputError, match=r"answers.jsonl:1: expected a JSON line with key, answer and finish"):
        judge.AnswerCache(tmp_path / "bad")


class ScriptedEndpoint:
    """Stands in for the openai backend's Endpoint (its settings, client, call, count, remember, counts and map) and
    answers from a script: each request's answer by its temperature step, counting what it was asked."""

    def __init__(self, answer):
        from docnmt.decode.backends.openai.endpoint import Settings

        self.settings, self.model, self.asked = Settings.of("http://judge.invalid/v1"), "scripted", []
        self.answer = answer
        self.client = types.SimpleNamespace(chat=types.SimpleNamespace(completions=types.SimpleNamespace(
            create=self.create)))

    def create(self, model, messages, max_tokens, temperature, top_p, seed):
        self.asked.append((messages[-1]["content"][:20], temperature, max_tokens))
        text, finish = self.answer(messages, temperature, max_tokens)
        usage = types.SimpleNamespace(prompt_tokens=10, completion_tokens=2, prompt_tokens_details=None)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=types.SimpleNamespace(content=text),
                                                                    finish_reason=finish)], usage=usage, model=model)

    def call(self, send, line=None):
        return send()

    def count(self, usage):
        pass

    def remember(self, response):
        pass


def test_an_unparsed_answer_is_asked_again_warmer_and_a_cut_one_with_more_tokens(tmp_path):
    def answer(messages, temperature, max_tokens):
        if max_tokens < 2000:
            return "Major:\naccura", "length"
        return ("I cannot say.", "stop") if temperature < 0.3 else ('Major:\naccuracy/omission - "x"', "stop")

    endpoint = ScriptedEndpoint(answer)
    scored = judge.Judge(endpoint, judge.AnswerCache(tmp_path)).mqm("English", "a", "German", "b")
    assert scored["score"] == -5 and len(scored["answers"]) == 4
    assert [t for _, t, _ in endpoint.asked] == [0.0] * 3 + [0.1] * 3 + [0.2] * 3 + [0.3] * 3
    assert [m for _, _, m in endpoint.asked][:3] == [500, 1000, 2000]
    again = ScriptedEndpoint(answer)
    rerun = judge.Judge(again, judge.AnswerCache(tmp_path))
    assert rerun.mqm("English", "a", "German", "b") == scored and again.asked == [] and rerun.cached == 12


def test_an_answer_that_never_parses_is_none_after_gembas_ten_warmer_tries(tmp_path):
    endpoint = ScriptedEndpoint(lambda messages, temperature, max_tokens: ("Die Lampe ist alt.", "stop"))
    scored = judge.Judge(endpoint, judge.AnswerCache(tmp_path)).esa("English", "a", "German", "b")
    # the spans' answer is any text; the score's never parses: 11 tries, temperature 0 to 1.0
    assert scored["score"] is None and scored["spans"] == "Die Lampe ist alt."
    assert [round(t, 1) for _, t, _ in endpoint.asked[1:]] == [round(i / 10, 1) for i in range(11)]


def test_an_endpoint_that_does_not_answer_is_one_line_naming_it_and_nothing_is_written(tmp_path):
    import subprocess

    from helpers import tool_env

    (tmp_path / "src.en").write_text("Hello.\n")
    (tmp_path / "hyp.de").write_text("Hallo.\n")
    result = subprocess.run([sys.executable, "-m", "docnmt.score.gemba", "--source", str(tmp_path / "src.en"),
                             "--reference", str(tmp_path / "hyp.de"), "--system", f"a={tmp_path / 'hyp.de'}",
                             "--source-language", "en", "--target-language", "de", "--base-url",
                             "http://127.0.0.1:9/v1", "--model", "judge", "--max-retries", "0", "--cache",
                             str(tmp_path / "cache"), "--output", str(tmp_path / "out.json"), "--answers",
                             str(tmp_path / "answers.jsonl")], capture_output=True, text=True, env=tool_env())
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "http://127.0.0.1:9/v1 (model judge)" in result.stderr and "unreachable" in result.stderr
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "answers.jsonl").exists()
