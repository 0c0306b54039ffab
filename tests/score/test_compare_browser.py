"""The comparison page in a real browser: Debian's chromium, driven by Selenium (docnmt.score.compare.browser).
The page loads with no console error, shows every strategy, highlights the error spans and the examples a strategy
misses where the data says, moves between documents by keyboard, and a filter gives the numbers, significance
included, that Python computes for the same segments, to the last printed digit. Where chromium is absent, these
tests skip with that reason."""

from __future__ import annotations

import json
import re

import pytest

from compare_inputs import OUTPUTS, REFERENCE, SOURCE, make_inputs

from docnmt.score.compare import browser, cli, page, randomization

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))


@pytest.fixture(scope="module")
def chromium():
    driver = browser.driver()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def small_page(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    inputs = make_inputs(root / "set", pronouns=True)
    out = root / "a page" / "compare.html"
    out.parent.mkdir()
    assert cli.main(inputs["args"] + ["--output", str(out)]) == 0
    return out


def embedded(path) -> dict:
    html = path.read_text(encoding="utf-8")
    return json.loads(html.split('<script type="application/json" id="docnmt-data">', 1)[1].split("</script>", 1)[0])


def open_page(driver, path):
    driver.get(browser.url(path))
    driver.get_log("browser")  # nothing before this load
    driver.refresh()
    status = driver.find_element("id", "status")
    assert "could not render" not in status.text, status.text
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors
    return status


def show(driver, view: str):
    driver.find_element("css selector", f"nav button[data-view={view}]").click()


def set_filter(driver, **values):
    driver.execute_script("Object.assign(window.docnmt.filters, arguments[0]); window.docnmt.update();", values)


def python_visible(data: dict, pattern: str, field: str = "source") -> list[int]:
    texts = data["source"] if field == "source" else data["reference"]
    return [line for line, text in enumerate(texts) if re.search(pattern, text)]


def test_the_page_loads_and_its_numbers_are_pythons_unfiltered_and_filtered(chromium, small_page):
    data = embedded(small_page)
    status = open_page(chromium, small_page)
    assert status.text.startswith("8 of 8 sentences, 3 of 3 documents")
    draws = randomization.mulberry32(data["seed"])
    assert chromium.execute_script("return window.docnmt.draws(5)") == [next(draws) for _ in range(5)]
    everything = list(range(len(SOURCE)))
    assert chromium.execute_script("return window.docnmt.printedOverview()") == \
        page.printed(data, page.overview(data, everything))
    show(chromium, "documents")
    assert len(chromium.find_elements("css selector", "#documents-table tbody tr")) == 3
    set_filter(chromium, regex=r"\bit\b", regexField="source")
    visible = python_visible(data, r"\bit\b")
    assert chromium.execute_script("return window.docnmt.visible()") == visible == [2, 7]
    assert len(chromium.find_elements("css selector", "#documents-table tbody tr")) == 2  # d1 and d3
    shown = chromium.execute_script("return window.docnmt.printedOverview()")
    assert shown == page.printed(data, page.overview(data, visible))
    assert shown != page.printed(data, page.overview(data, everything))
    show(chromium, "overview")
    cell = chromium.find_element("css selector", "#overview-table tr[data-system=cheating] td[data-metric=BLEU]")
    assert cell.text.startswith(shown["BLEU"]["cheating"][0] + " ")
    assert f"p={shown['BLEU']['cheating'][2]}" in cell.text


def test_the_overviews_pronoun_f1_is_the_scorers_unfiltered_and_recomputed_under_a_filter(chromium, small_page):
    """Gender and formality F1 in the Overview: unfiltered, pronouns.json's numbers to the printed digit; under a
    filter, the scorer's own micro-average of the visible sentences' counts, with the paired test Python computes."""
    from docnmt.score import pronouns

    data = embedded(small_page)
    scores = json.loads((small_page.parents[1] / "set/scores/pronouns.json").read_text())["systems"]
    open_page(chromium, small_page)
    shown = chromium.execute_script("return window.docnmt.printedOverview()")
    for category in ("gender", "formality"):
        for system in data["systems"]:
            expected = scores[system][category]["f1"]
            assert shown[f"{category} F1"][system][0] == ("–" if expected is None else f"{expected * 100:.1f}")
    counts = {json.loads(line)["system"]: json.loads(line)["counts"]
              for line in (small_page.parents[1] / "set/scores/pronouns.sentences.jsonl").read_text().splitlines()}
    set_filter(chromium, regex=r"\b(you|Your)\b", regexField="source")
    visible = python_visible(data, r"\b(you|Your)\b")
    filtered = chromium.execute_script("return window.docnmt.printedOverview()")
    assert filtered == page.printed(data, page.overview(data, visible))
    for system in data["systems"]:
        own = pronouns.score_counts([counts[system][line] for line in visible], 1)["formality"]["f1"]
        assert filtered["formality F1"][system][0] == ("–" if own is None else f"{own * 100:.1f}")
    assert filtered["formality F1"] != shown["formality F1"] or filtered["gender F1"] != shown["gender F1"]
    show(chromium, "overview")
    header = [th.text for th in chromium.find_elements("css selector", "#overview-table thead th")]
    assert "gender F1" in header and "formality F1" in header


def test_the_document_view_shows_every_strategy_its_context_and_the_error_span(chromium, small_page):
    open_page(chromium, small_page)
    show(chromium, "document")
    heading = chromium.find_element("css selector", "#view h2").text
    assert heading.startswith("Document d1")
    box = chromium.find_element("css selector", ".sentence[data-line='2']")
    systems = [r.get_attribute("data-system") for r in box.find_elements("css selector", "tbody tr")]
    assert systems == list(OUTPUTS)
    context = {s: box.find_element("css selector", f"tr[data-system='{s}'] td.context").text for s in OUTPUTS}
    assert context["cheating"] == " ‖ ".join(REFERENCE[:2])
    assert context["2-pass"] == " ‖ ".join(OUTPUTS["sentence-level"][:2])
    assert context["last-sentence"] == " ‖ ".join(OUTPUTS["last-sentence"][:2])
    assert context["sentence-level"] == "—"
    # refine: its draft (sentence-level's "Sie mag es.") with the word the refinement changed struck through
    assert context["refine"] == "sentence-level: Sie mag es."
    struck = box.find_elements("css selector", "tr[data-system='refine'] td.context del.diff")
    assert [d.text for d in struck] == ["es."]
    mark = chromium.find_element("css selector", ".sentence[data-line='1'] tr[data-system='sentence-level'] mark")
    assert mark.text == "Es" and mark.get_attribute("data-severity") == "critical"
    changed = box.find_elements("css selector", "tr[data-system='cheating'] ins.diff")
    assert [c.text for c in changed] == ["sie."]  # "Sie mag es." -> "Sie mag sie.": one word differs
    chromium.find_element("css selector", "body").send_keys("\ue014")  # the right arrow key
    assert chromium.find_element("css selector", "#view h2").text.startswith("Document d2")
    chromium.find_element("css selector", "body").send_keys("p")
    assert chromium.find_element("css selector", "#view h2").text.startswith("Document d1")


def test_the_test_sets_view_marks_each_miss_where_the_data_says(chromium, small_page):
    data = embedded(small_page)
    open_page(chromium, small_page)
    show(chromium, "tests")
    examples = chromium.find_elements("css selector", ".test")
    assert len(examples) == len(data["tests"]) == 2
    for example, test in zip(examples, data["tests"]):
        for system, mark in test["marks"].items():
            item = example.find_element("css selector", f"li[data-system='{system}']")
            assert item.get_attribute("class") == ("mark-ok" if mark else "mark-miss"), (test["class"], system)
    assert data["tests"][0]["marks"]["sentence-level"] == 0


def test_a_page_whose_data_does_not_parse_says_why_in_a_visible_line(chromium, small_page, tmp_path):
    html = small_page.read_text(encoding="utf-8")
    start = html.index('<script type="application/json" id="docnmt-data">') + len(
        '<script type="application/json" id="docnmt-data">')
    broken = tmp_path / "broken.html"
    broken.write_text(html[:start] + "{" + html[html.index("</script>", start):], encoding="utf-8")
    chromium.get(browser.url(broken))
    status = chromium.find_element("id", "status")
    assert status.is_displayed() and status.text.startswith("The page could not render: its embedded data does not parse")


def test_the_demos_page_shows_every_strategy_filters_and_marks_its_ctxpro_misses(chromium, trained_demo):
    from docnmt import layout

    path = trained_demo / layout.compare_page("demo")
    data = embedded(path)
    open_page(chromium, path)
    assert set(data["systems"]) >= {"sentence-level", "doc-trans", "cheating", "2-pass", "last-sentence"}
    show(chromium, "document")
    rows = chromium.find_elements("css selector", ".sentence")[0].find_elements("css selector", "tbody tr")
    assert [r.get_attribute("data-system") for r in rows] == data["systems"]
    assert "pronouns" in chromium.find_element("css selector", ".sentence thead").text
    show(chromium, "documents")
    before = len(chromium.find_elements("css selector", "#documents-table tbody tr"))
    set_filter(chromium, regex=r"\b(it|him|her|them)\b", regexField="source")
    after = len(chromium.find_elements("css selector", "#documents-table tbody tr"))
    documents = {data["doc_of"][line] for line in python_visible(data, r"\b(it|him|her|them)\b")}
    assert before == len(data["documents"]) > after == len(documents)
    visible = python_visible(data, r"\b(it|him|her|them)\b")
    assert chromium.execute_script("return window.docnmt.visible()") == visible
    assert 0 < len(visible) < len(data["source"])
    assert chromium.execute_script("return window.docnmt.printedOverview()") == \
        page.printed(data, page.overview(data, visible))
    set_filter(chromium, regex="")
    show(chromium, "tests")
    missed = [(n, s) for n, t in enumerate(data["tests"][:100]) for s, m in t["marks"].items() if not m]
    assert missed, "the demo's sentence-level misses some examples"
    examples = chromium.find_elements("css selector", ".test")
    number, system = missed[0]
    item = examples[number].find_element("css selector", f"li[data-system='{system}']")
    assert item.get_attribute("class") == "mark-miss"


def test_the_mechanics_demos_page_highlights_xcomets_spans_where_the_data_says(chromium, mechanics_demo):
    from docnmt import layout

    path = mechanics_demo / layout.compare_page("demo")
    data = embedded(path)
    assert data["spans"], "the mechanics demo's XCOMET tags spans"
    open_page(chromium, path)
    system_index, line, start, end, severity, metric = data["spans"][0]
    system = data["systems"][system_index]
    document = data["doc_of"][line]
    chromium.execute_script("window.docnmt.state.doc = arguments[0]; window.docnmt.state.view = 'document';"
                            "window.docnmt.update();", document)
    marks = chromium.find_elements("css selector", f".sentence[data-line='{line}'] tr[data-system='{system}'] mark")
    # each character gets the worst severity of the spans over it: this span's characters are marked at least as
    # severely, in one run of consecutive marks
    marked = "".join(m.get_attribute("textContent") for m in marks
                     if data["severities"].index(m.get_attribute("data-severity")) >= severity)
    assert data["outputs"][system][line][start:end] in marked, (marked, start, end)
