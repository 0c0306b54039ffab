"""An LLM as the judge: GEMBA-ESA and GEMBA-MQM (Kocmi & Federmann 2023; MicrosoftTranslator/GEMBA, the ``gemba``
package 0.1.3, whose prompts are released under CC BY-SA 4.0) against any OpenAI-compatible endpoint, through the
``openai`` backend's client (:class:`docnmt.decode.backends.openai.endpoint.Endpoint`: concurrency, retries with
backoff, the key read from an environment variable and written nowhere, usage counted).

- **GEMBA-ESA** asks twice: first for the translation's error spans (major/minor, three worked examples), then, given
  those spans, for a score from 0 to 100. The score is read as ``gemba``'s ``validate_number`` reads it (a single
  integer in the answer, ``['N']`` or ``N/100``, within 0-100).
- **GEMBA-MQM** asks once (three worked examples) for ``Critical:``/``Major:``/``Minor:`` error lines, weighted 25, 5
  and 1, counted up to five errors, capped at 25 and negated: a score from -25 to 0 (``gemba``'s
  ``parse_mqm_answer`` without its normalisation).
  **One difference**: ``gemba`` scores an answer with no error line and no severity heading at all ("The translation
  is perfect.", an empty answer) as 0, a perfect translation; here it does not parse.
- An answer that does not parse is asked again with the temperature raised a tenth (``gemba``'s steps, up to 1.0),
  and an answer cut at ``max_tokens`` (500) again with twice the tokens, up to ``max_tokens_limit`` (4000). What still
  does not parse is counted (``unparsed``), shown beside the score and left out of the mean, never scored 0. A judge
  that answers nothing parsable for a method, in any segment of any system, is an error of one line, and nothing is
  written.
- Every answer is cached on disk (``CACHE/answers.jsonl``, one line per answer, appended as it comes) under the
  sha256 of the endpoint's URL, the model, the messages and the sampling settings: a rerun asks nothing again, and a
  killed run resumes where it stopped.

CLI (the workflow's rule ``gemba``, :mod:`docnmt.score.metric`'s protocol)::

    python -m docnmt.score.gemba --source test.en --reference test.de --system NAME=PATH... \\
        --source-language en --target-language de --base-url http://127.0.0.1:8000/v1 --model my-judge \\
        [--api-key-env VAR] [--method esa] [--method mqm] [--cache DIR] [--baseline NAME...] --output gemba.json \\
        [--answers gemba.answers.jsonl]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections import defaultdict
from pathlib import Path

from .. import layout
from ..manual import argument_parser
from .metric import Metric
from ..textio import InputError, atomic_outputs, cli_errors
from ..option_ranges import NONNEGATIVE, NONNEGATIVE_INT, POSITIVE, POSITIVE_INT, SEED

#: The methods and their Table 3 columns.
METHODS = {"esa": "GEMBA-ESA", "mqm": "GEMBA-MQM"}
#: gemba asks again up to temperature 10/10 (it sends temperature/10)
MAX_TEMPERATURE_STEP = 10
#: gemba's first token budget (MQM), doubled for an answer cut short up to its limit
MAX_TOKENS, MAX_TOKENS_LIMIT = 500, 4000

# ---- GEMBA's prompts (gemba 0.1.3: gemba_esa.py, gemba_mqm_utils.py) ---------------------------------------------
_CATEGORIES = ("Based on the source segment and machine translation surrounded with triple backticks, identify error "
               "types in the translation and classify them. The categories of errors are: accuracy (addition, "
               "mistranslation, omission, untranslated text), fluency (character encoding, grammar, inconsistency, "
               "punctuation, register, spelling), style (awkward), terminology (inappropriate for context, "
               "inconsistent use), non-translation, other, or no-error.\n")
_SEGMENTS = "{source_lang} source:\n```{source_seg}```\n{target_lang} translation:\n```{target_seg}```\n\n"
ESA_SYSTEM = "Your task is to identify machine translation errors and assess the quality of the translation."
ESA_TEMPLATE = _SEGMENTS + _CATEGORIES + (
    "Each error is classified as one of two categories: major or minor. Major errors disrupt the flow and make the "
    "understandability of text difficult or impossible. Minor errors are errors that do not disrupt the flow "
    "significantly and what the text is trying to say is still understandable.")
MQM_SYSTEM = ("You are an annotator for the quality of machine translation. Your task is to identify errors and "
              "assess the quality of the translation.")
MQM_TEMPLATE = _SEGMENTS + _CATEGORIES + (
    "Each error is classified as one of three categories: critical, major, and minor. Critical errors inhibit "
    "comprehension of the text. Major errors disrupt the flow, but what the text is trying to say is still "
    "understandable. Minor errors are technically errors, but do not disrupt the flow or hinder comprehension.")
ESA_RANKING = (
    'Given the translation from {source_lang} to {target_lang} and the annotated error spans, assign a score on a '
    'continuous scale from 0 to 100. The scale has following reference points: 0="No meaning preserved", 33="Some '
    'meaning preserved", 66="Most meaning preserved and few grammar mistakes", up to 100="Perfect meaning and '
    'grammar".\n\nScore the following translation from {source_lang} source:\n```{source_seg}```\n{target_lang} '
    'translation:\n```{target_seg}```\nAnnotated error spans:\n```{error_spans}```\nScore (0-100): ')

#: The three worked examples (English-German, English-Czech, Chinese-English): source, translation, and each
#: method's answer.
_SHOTS = [
    ("English", "I do apologise about this, we must gain permission from the account holder to discuss an order with "
     "another person, I apologise if this was done previously, however, I would not be able to discuss this with "
     "yourself without the account holders permission.",
     "German", "Ich entschuldige mich dafür, wir müssen die Erlaubnis einholen, um eine Bestellung mit einer anderen "
     "Person zu besprechen. Ich entschuldige mich, falls dies zuvor geschehen wäre, aber ohne die Erlaubnis des "
     "Kontoinhabers wäre ich nicht in der Lage, dies mit dir involvement.",
     'Major:\naccuracy/mistranslation - "involvement"\naccuracy/omission - "the account holder"\nMinor:\n'
     'fluency/grammar - "wäre"\nfluency/register - "dir"\n',
     'Critical:\nno-error\nMajor:\naccuracy/mistranslation - "involvement"\naccuracy/omission - "the account '
     'holder"\nMinor:\nfluency/grammar - "wäre"\nfluency/register - "dir"\n'),
    ("English", "Talks have resumed in Vienna to try to revive the nuclear pact, with both sides trying to gauge the "
     "prospects of success after the latest exchanges in the stop-start negotiations.",
     "Czech", "Ve Vídni se ve Vídni obnovily rozhovory o oživení jaderného paktu, přičemž obě partaje se snaží "
     "posoudit vyhlídky na úspěch po posledních výměnách v jednáních.",
     'Major:\naccuracy/addition - "ve Vídni"\naccuracy/omission - "the stop-start"\nMinor:\nterminology/'
     'inappropriate for context - "partaje"\n',
     'Critical:\nno-error\nMajor:\naccuracy/addition - "ve Vídni"\naccuracy/omission - "the stop-start"\nMinor:\n'
     'terminology/inappropriate for context - "partaje"\n'),
    ("Chinese", "大众点评乌鲁木齐家居卖场频道为您提供高铁居然之家地址，电话，营业时间等最新商户信息，找装修公司，就上大众点评",
     "English", "Urumqi Home Furnishing Store Channel provides you with the latest business information such as the "
     "address, telephone number, business hours, etc., of high-speed rail, and find a decoration company, and go to "
     "the reviews.",
     'Major:\naccuracy/addition - "of high-speed rail"\naccuracy/mistranslation - "go to the reviews"\nMinor:\n'
     'style/awkward - "etc.,"\n',
     'Critical:\naccuracy/addition - "of high-speed rail"\nMajor:\naccuracy/mistranslation - "go to the reviews"\n'
     'Minor:\nstyle/awkward - "etc.,"\n'),
]


def _fewshot(system: str, template: str, answer: int, fields: dict) -> list[dict]:
    messages = [{"role": "system", "content": system}]
    for source_lang, source_seg, target_lang, target_seg, *answers in _SHOTS:
        messages.append({"role": "user", "content": template.format(
            source_lang=source_lang, source_seg=source_seg, target_lang=target_lang, target_seg=target_seg)})
        messages.append({"role": "assistant", "content": answers[answer]})
    return messages + [{"role": "user", "content": template.format(**fields)}]


def esa_spans_messages(source_lang: str, source_seg: str, target_lang: str, target_seg: str) -> list[dict]:
    """GEMBA-ESA's first request: the error spans of one translation."""
    return _fewshot(ESA_SYSTEM, ESA_TEMPLATE, 0, dict(source_lang=source_lang, source_seg=source_seg,
                                                      target_lang=target_lang, target_seg=target_seg))


def esa_ranking_messages(source_lang: str, source_seg: str, target_lang: str, target_seg: str,
                         error_spans: str) -> list[dict]:
    """GEMBA-ESA's second request: the score given the spans (one user turn, as gemba sends a text prompt)."""
    return [{"role": "user", "content": ESA_RANKING.format(source_lang=source_lang, source_seg=source_seg,
                                                           target_lang=target_lang, target_seg=target_seg,
                                                           error_spans=error_spans)}]


def mqm_messages(source_lang: str, source_seg: str, target_lang: str, target_seg: str) -> list[dict]:
    """GEMBA-MQM's request."""
    return _fewshot(MQM_SYSTEM, MQM_TEMPLATE, 1, dict(source_lang=source_lang, source_seg=source_seg,
                                                      target_lang=target_lang, target_seg=target_seg))


# ---- parsing the answers as gemba parses them ---------------------------------------------------------------------
def parse_number(answer: str | None, low: int = 0, high: int = 100) -> int | None:
    """gemba's ``validate_number``: the one integer in the answer (or ``['N']``, or ``N/high``), within [low, high];
    None otherwise."""
    if answer is None:
        return None
    numbers = re.findall(r"\d+", answer)
    value = None
    if len(numbers) == 1:
        value = int(numbers[0])
    elif re.match(r"^\[['\"][0-9]*['\"]\]$", answer):
        value = int(answer[2:-2])
    elif re.match(rf"^[0-9]*/{high}$", answer):
        value = int(answer.split("/")[0])
    return value if value is not None and low <= value <= high else None


_CLASSES = ("accuracy", "fluency", "locale convention", "style", "terminology", "non-translation", "other")
_WEIGHTS = {"critical": 25, "major": 5, "minor": 1}


def _broken_json_errors(text: str) -> dict:
    """gemba's ``parse_broken_json``'s errors: of an answer in its JSON form that does not load."""
    errors: dict = defaultdict(list)
    if '"errors": ' in text and "improved translation" in text:
        parts = text.split('", "errors": ')
        if len(parts) != 2:
            return errors
        try:
            return json.loads(parts[1][:-1])
        except ValueError:
            last = None
            for word in re.findall(r"\b\w+\b", parts[1][:-1].lower()):
                if word in _WEIGHTS:
                    last = word
                elif last is not None and word == "class":
                    errors[last].append({"class": "other"})
    return errors


def parse_mqm(answer: str | None) -> tuple[int | None, dict]:
    """GEMBA-MQM's score of an answer as gemba's ``parse_mqm_answer`` (``normalize=False``) computes it, and the
    errors by severity; (None, {}) where it does not parse: no answer, or (the one difference from gemba) no error
    line and no severity heading at all."""
    if answer is None:
        return None, {}
    text, parsed = str(answer), False
    if text.startswith('{"improved translation"'):
        try:
            errors = json.loads(text)["errors"]
        except ValueError:
            errors = _broken_json_errors(text)
        parsed = True
    else:
        errors = {"critical": [], "major": [], "minor": []}
        level = None
        for line in text.lower().split("\n"):
            line = line.strip()
            if line in ("critical:", "major:", "minor:"):
                level, parsed = line[:-1], True
                continue
            if "no-error" in line or "no error" in line or line == "":
                continue
            if level is None:
                continue
            errors["critical" if "non-translation" in line else level].append(line)
            parsed = True
    if not parsed:
        return None, {}
    total = counted = 0
    for level in ("critical", "major", "minor"):
        for _ in errors.get(level, []):
            if counted < 5:
                total += _WEIGHTS[level]
                counted += 1
    return -min(total, 25), {k: list(v) for k, v in errors.items() if v}


def _parsed_mqm(text: str):
    """(score, errors) of an answer that parses, else None (Judge.answer's parse)."""
    score, errors = parse_mqm(text)
    return None if score is None else (score, errors)


# ---- the answers' cache -----------------------------------------------------------------------------------------
class AnswerCache:
    """Every answer of a judge, on disk: ``FOLDER/answers.jsonl``, one JSON line per request (its key, the answer,
    its finish reason), appended and flushed as each arrives, so that a killed run keeps what it paid for."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / "answers.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.answers: dict[str, dict] = {}
        self.lock = threading.Lock()
        if self.path.exists():
            text = self.path.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):  # a line cut by a kill: dropped, its request is asked again
                text = text[:text.rfind("\n") + 1]
                self.path.write_text(text, encoding="utf-8")
            for number, line in enumerate(text.splitlines(), 1):
                try:
                    record = json.loads(line)
                    self.answers[record["key"]] = record
                except (ValueError, KeyError, TypeError):
                    raise InputError(self.path, "expected a JSON line with key, answer and finish (the judge's "
                                                "cache): delete the file to ask every request again", number) from None

    @staticmethod
    def key(base_url: str, model: str, messages: list[dict], **sampling) -> str:
        text = json.dumps({"base_url": base_url, "model": model, "messages": messages, **sampling}, sort_keys=True,
                          ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict | None:
        return self.answers.get(key)

    def put(self, key: str, answer: str, finish: str) -> None:
        record = {"key": key, "answer": answer, "finish": finish}
        with self.lock:
            self.answers[key] = record
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())


class Judge:
    """GEMBA's requests to one endpoint and model, each answer from the cache where it is there."""

    def __init__(self, endpoint, cache: AnswerCache, seed: int = 0, max_tokens: int = MAX_TOKENS,
                 max_tokens_limit: int = MAX_TOKENS_LIMIT):
        self.endpoint, self.cache, self.seed = endpoint, cache, seed
        self.max_tokens, self.max_tokens_limit = max_tokens, max_tokens_limit
        self.lock = threading.Lock()
        self.cached = 0

    def ask(self, messages: list[dict], step: int, max_tokens: int, line: int | None = None) -> tuple[str, str]:
        """The answer to ``messages`` at temperature ``step``/10 (gemba's) and its finish reason."""
        endpoint = self.endpoint
        key = AnswerCache.key(endpoint.settings.base_url, endpoint.model, messages, temperature=step / 10,
                              max_tokens=max_tokens, seed=self.seed, top_p=1)
        found = self.cache.get(key)
        if found is not None:
            with self.lock:
                self.cached += 1
            return found["answer"], found["finish"]

        def send():
            return endpoint.client.chat.completions.create(model=endpoint.model, messages=messages,
                                                           max_tokens=max_tokens, temperature=step / 10, top_p=1,
                                                           seed=self.seed)

        response = endpoint.call(send, line)
        endpoint.count(response.usage)
        endpoint.remember(response)
        choice = response.choices[0]
        answer, finish = (choice.message.content or "").strip(), choice.finish_reason or ""
        self.cache.put(key, answer, finish)
        return answer, finish

    def answer(self, messages: list[dict], parse, line: int | None = None):
        """gemba's loop: the first answer that parses, asking again with the temperature raised a tenth (and, for an
        answer cut short, twice the tokens up to ``max_tokens_limit``); (parsed or None, the answers asked)."""
        answers = []
        for step in range(MAX_TEMPERATURE_STEP + 1):
            tokens = self.max_tokens
            while True:
                text, finish = self.ask(messages, step, tokens, line)
                if finish != "length" or tokens * 2 > self.max_tokens_limit:
                    break
                tokens *= 2
            answers.append(text)
            value = parse(text) if finish == "stop" else None
            if value is not None:
                return value, answers
        return None, answers

    def esa(self, src_lang: str, source: str, tgt_lang: str, hypothesis: str, line: int | None = None) -> dict:
        spans, _ = self.answer(esa_spans_messages(src_lang, source, tgt_lang, hypothesis), lambda text: text, line)
        if spans is None:
            return {"score": None, "spans": None}
        score, answers = self.answer(esa_ranking_messages(src_lang, source, tgt_lang, hypothesis, spans),
                                     parse_number, line)
        return {"score": score, "spans": spans, "answers": answers}

    def mqm(self, src_lang: str, source: str, tgt_lang: str, hypothesis: str, line: int | None = None) -> dict:
        parsed, answers = self.answer(mqm_messages(src_lang, source, tgt_lang, hypothesis), _parsed_mqm, line)
        return {"score": None if parsed is None else parsed[0], "errors": None if parsed is None else parsed[1],
                "answers": answers}


# ---- the workflow's rule -------------------------------------------------------------------------------------------
def _host(base_url: str) -> str:
    return re.sub(r"^https?://", "", base_url).split("/")[0]


def signature(method: str, model: str, base_url: str, seed: int, max_tokens: int = MAX_TOKENS,
              sample: int | None = None) -> str:
    from .. import __version__

    template = {"esa": ESA_TEMPLATE + ESA_RANKING, "mqm": MQM_TEMPLATE}[method]
    prompt = hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]
    return (f"{METHODS[method]}|model:{model}|endpoint:{_host(base_url)}|prompt:gemba-0.1.3:{prompt}|"
            f"temperature:0+|max_tokens:{max_tokens}|seed:{seed}|"
            f"{'segments:all' if sample is None else f'sample:{sample}'}|docnmt:{__version__}")


def _all_segments(scores: list, chosen: list[int], count: int) -> list:
    """Scores of the judged segments (``chosen``, positions among the ``count`` scored) as one score per segment,
    null where not judged."""
    out: list = [None] * count
    for position, value in zip(chosen, scores, strict=True):
        out[position] = value
    return out


def score_systems(args) -> int:
    from ..decode.backends.openai.endpoint import Endpoint, Settings
    from ..decode.prompting.template import language_name
    from .evalset import load_args
    from .significance import ALPHA, mean_bootstrap_tests

    data = load_args(args)
    settings = Settings.of(args.base_url, api_key_env=args.api_key_env, max_concurrency=args.max_concurrency,
                           max_retries=args.max_retries, timeout=args.timeout)
    endpoint = Endpoint(settings, args.model)
    judge = Judge(endpoint, AnswerCache(args.cache), seed=args.seed, max_tokens=args.max_tokens,
                  max_tokens_limit=args.max_tokens_limit)
    chosen = sampled(len(data.lines), args.sample, args.seed)
    src_lang, tgt_lang = language_name(args.source_language), language_name(args.target_language)
    methods = list(dict.fromkeys(args.method or list(METHODS)))
    columns = [METHODS[m] for m in methods]
    result = {"reference": str(args.reference), "sentences": len(data.reference), "judged": len(chosen),
              "columns": columns,
              "signatures": {}, "systems": {s: {} for s in data.systems}, "paired_bootstrap": {}, "alpha": ALPHA,
              "judge": {"base_url": settings.base_url, "model": args.model, "api_key_env": settings.api_key_env}}
    details = []
    segments: dict[str, dict[str, list]] = {}
    for method, column in zip(methods, columns):
        sig = result["signatures"][column] = signature(method, args.model, settings.base_url, args.seed,
                                                       args.max_tokens, args.sample)
        run = getattr(judge, method)
        for name, hypotheses in data.systems.items():
            items = [(data.lines[i], data.source[i], hypotheses[i]) for i in chosen]
            judged = endpoint.map(lambda item: run(src_lang, item[1], tgt_lang, item[2], item[0]), items)
            scores = [j["score"] for j in judged]
            parsed = [s for s in scores if s is not None]
            segments.setdefault(column, {})[name] = scores
            result["systems"][name][column] = {
                "score": round(sum(parsed) / len(parsed), 4) if parsed else None, "parsed": len(parsed),
                "unparsed": len(scores) - len(parsed), "signature": sig}
            details += [{"metric": column, "system": name, "line": item[0], **j} for item, j in zip(items, judged)]
            print(f"{column} {name}: {result['systems'][name][column]['score']} "
                  f"({len(scores) - len(parsed)} unparsed)")
    result["paired_bootstrap"] = mean_bootstrap_tests(segments, args.baseline, args.bootstrap_samples,
                                                      result["signatures"])
    # every segment's score, null where not judged (outside a sample) or not parsed: the comparison page's
    result["segments"] = {column: {name: _all_segments(scores, chosen, len(data.lines))
                                   for name, scores in by_system.items()} for column, by_system in segments.items()}
    for column in columns:
        if not any(result["systems"][name][column]["parsed"] for name in data.systems):
            last = next((d["answers"][-1] for d in reversed(details) if d["metric"] == column and d.get("answers")), "")
            raise InputError(f"{settings.base_url} (model {args.model})",
                             f"{column}: the judge answered nothing parsable for any segment of any system, after "
                             f"asking each again up to temperature 1.0 (its last answer: {last[:80]!r}); nothing is "
                             "written: is it a model that follows GEMBA's prompt? (its answers stay in the cache)")
    usage = {**endpoint.counts(), "cached_answers": judge.cached}
    result["usage"] = usage
    result["notes"] = [f"{', '.join(columns)}: the judge {args.model} at {_host(settings.base_url)} (GEMBA's prompts, "
                       f"gemba 0.1.3): {usage['requests']} requests ({usage['cached_answers']} answers from the "
                       f"cache), {usage['prompt_tokens']} prompt and {usage['completion_tokens']} completion tokens"
                       + price_note(usage, args.price_input, args.price_output) + "."]
    outputs = [args.output] + ([args.answers] if args.answers else [])
    with atomic_outputs(outputs) as (out, *answers):
        json.dump(result, out, indent=1, ensure_ascii=False)
        out.write("\n")
        for record in details:
            if answers:
                answers[0].write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


@cli_errors
def main(argv=None) -> int:
    from .evalset import add_seam_arguments

    parser = argument_parser("docnmt.score.gemba", __doc__.split("\n\n")[0])
    add_seam_arguments(parser)
    parser.add_argument("--source-language", required=True, help="the source language's code (en) or name")
    parser.add_argument("--target-language", required=True, help="the target language's code (de) or name")
    parser.add_argument("--base-url", required=True, help="the endpoint, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", required=True, help="the judge's name at the endpoint")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY",
                        help="the environment variable that holds the key (read there only, written nowhere)")
    parser.add_argument("--method", action="append", choices=list(METHODS),
                        help="esa (GEMBA-ESA) and/or mqm (GEMBA-MQM), repeatable; default: both")
    parser.add_argument("--cache", type=Path, default=Path("results/judge-cache"),
                        help="the answers' cache folder (default: %(default)s)")
    parser.add_argument("--max-concurrency", type=POSITIVE_INT, default=8)
    parser.add_argument("--max-retries", type=NONNEGATIVE_INT, default=6)
    parser.add_argument("--timeout", type=POSITIVE, default=600.0)
    parser.add_argument("--seed", type=SEED, default=0, help="sent with every request, and the sample's seed")
    parser.add_argument("--sample", type=POSITIVE_INT, help="judge this many segments, drawn with the seed, the same for "
                                                   "every system (default: all)")
    parser.add_argument("--max-tokens", type=POSITIVE_INT, default=MAX_TOKENS,
                        help="the answer's first token budget (gemba's %(default)s)")
    parser.add_argument("--max-tokens-limit", type=POSITIVE_INT, default=MAX_TOKENS_LIMIT,
                        help="an answer cut short is asked again with twice the tokens up to this (gemba's %(default)s)")
    parser.add_argument("--price-input", type=NONNEGATIVE, help="the judge's price per million prompt tokens (the note's cost)")
    parser.add_argument("--price-output", type=NONNEGATIVE, help="its price per million completion tokens")
    parser.add_argument("--answers", type=Path, help="JSON lines: every segment's score and the judge's answers")
    args = parser.parse_args(argv)
    return score_systems(args)


def sampled(count: int, sample: int | None, seed: int) -> list[int]:
    """The segments judged: all, or ``sample`` of them drawn with ``seed`` (the same for every system), in order."""
    import random

    if sample is None or sample >= count:
        return list(range(count))
    return sorted(random.Random(seed).sample(range(count), sample))


def price_note(usage: dict, price_input: float | None, price_output: float | None) -> str:
    """What this run's requests cost at the given prices per million tokens (cached answers cost nothing now)."""
    if price_input is None and price_output is None:
        return ""
    cost = (usage["prompt_tokens"] * (price_input or 0) + usage["completion_tokens"] * (price_output or 0)) / 1e6
    return f", {cost:.4f} at {price_input or 0}/{price_output or 0} per million prompt/completion tokens"


METRIC = Metric(
    name="gemba", module=__name__, order=3,
    summary="GEMBA-ESA and GEMBA-MQM: an LLM as the judge, on any OpenAI-compatible endpoint",
    columns=lambda config: [METHODS[m] for m in config["metrics"]["gemba"]["method"]],
    environment="endpoint", conda="models.yaml", unit="sentence", needs=("source", "languages"),
    higher_is_better=True,
    signature="the method, the judge's name and host, the prompt's sha256, temperature (raised on a retry), "
              "max_tokens, seed and docnmt's version",
    enabled=lambda config: bool((config["metrics"].get("gemba") or {}).get("base_url")),
    options={
        "base_url": {"description": "The judge's OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vllm "
                                    "serve) or https://api.openai.com/v1; null: no GEMBA columns.",
                     "type": ["string", "null"], "pattern": "^https?://", "default": None},
        "model": {"description": "The judge's model name at the endpoint.", "type": ["string", "null"],
                  "default": None},
        "api_key_env": {"description": "The environment variable that holds the endpoint's key (read there only, "
                                       "never written to a config, log or score file).",
                        "type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "default": "OPENAI_API_KEY"},
        "method": {"description": "esa (GEMBA-ESA: error spans, then a 0-100 score) and/or mqm (GEMBA-MQM: -25 to "
                                  "0 from weighted error lines).", "type": "array",
                   "items": {"enum": list(METHODS)}, "minItems": 1, "uniqueItems": True, "default": list(METHODS)},
        "cache": {"description": "The folder of the judge's answers (answers.jsonl): a rerun asks nothing again, a "
                                 "killed run resumes.", "type": "string", "default": "results/judge-cache"},
        "max_concurrency": {"description": "Requests in flight at once.", "type": "integer", "minimum": 1,
                            "default": 8},
        "max_retries": {"description": "Retries of a request after a rate limit, a server error or a timeout.",
                        "type": "integer", "minimum": 0, "default": 6},
        "timeout": {"description": "Seconds to wait for one answer.", "type": "number", "exclusiveMinimum": 0,
                    "default": 600},
        "sample": {"description": "Judge this many segments of the test set, drawn with seed 0, the same for every "
                                  "system (an LLM judge is paid per request); null: every segment.",
                   "type": ["integer", "null"], "minimum": 1, "default": None},
        "max_tokens": {"description": "The answer's first token budget (gemba's 500).", "type": "integer",
                       "minimum": 1, "default": MAX_TOKENS},
        "max_tokens_limit": {"description": "An answer cut short is asked again with twice the tokens, up to this "
                                            "(gemba's 4000).", "type": "integer", "minimum": 1,
                             "default": MAX_TOKENS_LIMIT},
        "price_input": {"description": "The judge's price per million prompt tokens (null: no cost in the note).",
                        "type": ["number", "null"], "minimum": 0, "default": None},
        "price_output": {"description": "The judge's price per million completion tokens.",
                         "type": ["number", "null"], "minimum": 0, "default": None},
    },
    outputs={"answers": layout.judge_answers},
    note="GEMBA-ESA (0 to 100), GEMBA-MQM (-25 to 0): the mean judged segment score over the answers that parsed "
         "(docnmt.score.gemba, GEMBA's prompts); [N unparsed]: segments whose answers did not parse after asking "
         "again with the temperature raised, left out of the mean; significance: paired bootstrap of the mean over "
         "the segments judged in both systems. Test set only.",
    digits=1, threads=1, mem_mb=2000, runtime=(30, 600))


if __name__ == "__main__":
    raise SystemExit(main())
