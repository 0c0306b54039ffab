/* The comparison page's script (docnmt.score.compare): plain JavaScript, no build step, nothing fetched.
   Its numbers are computed as docnmt/score/compare/randomization.py computes them (the same generator, statistics
   and order of additions), so that a filter gives the numbers Python gives for the same segments. */
(function () {
  "use strict";
  var statusLine = document.getElementById("status");
  function fail(message) {
    statusLine.textContent = "The page could not render: " + message;
    statusLine.className = "error";
  }
  window.addEventListener("error", function (event) { fail(event.message || String(event)); });

  var DATA;
  try {
    DATA = JSON.parse(document.getElementById("docnmt-data").textContent);
  } catch (err) {
    fail("its embedded data does not parse (" + err.message + ")");
    return;
  }
  if (DATA.format !== 1) { fail("its data is of format " + DATA.format + ", this script reads format 1"); return; }

  // ---- approximate randomization (randomization.py) ----------------------------------------------------------
  function mulberry32(seed) {
    var state = seed >>> 0;
    return function () {
      state = (state + 0x6D2B79F5) >>> 0;
      var t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
  }
  var wordCache = {};
  function swapWords(units) {  // (trials x blocks) words, as swap_words
    var blocks = Math.ceil(units / 32), key = String(blocks);
    if (!wordCache[key]) {
      var next = mulberry32(DATA.seed), words = new Uint32Array(DATA.trials * blocks);
      for (var i = 0; i < words.length; i++) { words[i] = next(); }
      wordCache[key] = words;
    }
    return wordCache[key];
  }
  function log(value) { return value > 0 ? Math.log(value) : -9999999999.0; }
  function bleu(s) {
    var sysLen = s[0], refLen = s[1], bp = 1.0, any = false, n;
    if (sysLen < refLen) { bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0; }
    for (n = 0; n < 4; n++) { if (s[2 + n]) { any = true; } }
    if (!any) { return 0.0; }
    var p = [0.0, 0.0, 0.0, 0.0], smooth = 1.0;
    for (n = 0; n < 4; n++) {
      var correct = s[2 + n], total = s[6 + n];
      if (total === 0) { break; }
      if (correct === 0) { smooth *= 2; p[n] = 100.0 / (smooth * total); } else { p[n] = 100.0 * correct / total; }
    }
    return bp * Math.exp((log(p[0]) + log(p[1]) + log(p[2]) + log(p[3])) / 4);
  }
  function chrf(s) {
    var eps = 1e-16, factor = 4, avgPrec = 0.0, avgRec = 0.0, effective = 0;
    for (var i = 0; i < s.length / 3; i++) {
      var nHyp = s[3 * i], nRef = s[3 * i + 1], nMatch = s[3 * i + 2];
      var prec = nHyp > 0 ? nMatch / nHyp : eps, rec = nRef > 0 ? nMatch / nRef : eps;
      if (nHyp > 0 && nRef > 0) { avgPrec += prec; avgRec += rec; effective += 1; }
    }
    if (effective === 0) { avgPrec = avgRec = 0.0; } else { avgPrec /= effective; avgRec /= effective; }
    if (avgPrec + avgRec) { return 100 * ((1 + factor) * avgPrec * avgRec) / ((factor * avgPrec) + avgRec); }
    return 0.0;
  }
  function ter(s) {
    if (s[1] > 0) { return 100 * s[0] / s[1]; }
    return s[0] > 0 ? 100.0 : 0.0;
  }
  function f1(s, weights) {  // pronoun F1 from summed per-class counts, as randomization.f1
    var sums = [0, 0, 0];
    for (var i = 0; i < 3; i++) {
      for (var k = 0; k < weights.length; k++) { sums[i] = sums[i] + weights[k] * s[3 * k + i]; }
    }
    var hyp = sums[0], ref = sums[1], match = sums[2];
    var recall = ref ? match / ref : NaN, precision = hyp ? match / hyp : NaN;
    if (!isNaN(recall) && !isNaN(precision)) { return recall + precision ? 2 * recall * precision / (recall + precision) : NaN; }
    return recall;
  }
  function score(kind, summed, count, weights) {
    if (kind === "f1") { return f1(summed, weights); }
    if (kind === "mean") { return count ? summed[0] / count : NaN; }
    return kind === "bleu" ? bleu(summed) : kind === "chrf" ? chrf(summed) : ter(summed);
  }
  var STATS = {};  // metric -> system -> Float64Array
  DATA.metrics.forEach(function (m) {
    STATS[m.name] = {};
    DATA.systems.forEach(function (s) { STATS[m.name][s] = Float64Array.from(m.stats[s]); });
  });
  function sumRows(stats, width, units) {
    var total = new Float64Array(width);
    for (var i = 0; i < units.length; i++) {
      var row = units[i] * width;
      for (var d = 0; d < width; d++) { total[d] = total[d] + stats[row + d]; }
    }
    return total;
  }
  function value(metric, system, units) {
    return score(metric.kind, sumRows(STATS[metric.name][system], metric.width, units), units.length, metric.weights) *
      metric.scale;
  }
  function pairedTest(metric, baseline, system, units) {
    var width = metric.width, count = units.length, base = STATS[metric.name][baseline],
        stats = STATS[metric.name][system];
    var baseSum = sumRows(base, width, units), sysSum = sumRows(stats, width, units);
    var observed = score(metric.kind, sysSum, count, metric.weights) - score(metric.kind, baseSum, count, metric.weights);
    var groups = Math.ceil(count / 8), blocks = Math.ceil(count / 32), trials = DATA.trials;
    var difference = new Float64Array(groups * 8 * width), i, d;
    for (i = 0; i < count; i++) {
      for (d = 0; d < width; d++) { difference[i * width + d] = stats[units[i] * width + d] - base[units[i] * width + d]; }
    }
    // Python adds every group's entry for every statistic; an entry that is +0 (a statistic or a group of eight
    // units where the two systems agree) leaves a sum as it is, so it is skipped here: the same numbers result
    var active = [], busy = [];
    for (d = 0; d < width; d++) {
      for (i = 0; i < count; i++) { if (difference[i * width + d] !== 0) { active.push(d); break; } }
    }
    var used = active.length;
    for (var g = 0; g < groups; g++) {
      for (i = g * 8; i < g * 8 + 8 && i < count; i++) {
        var any = false;
        for (var a0 = 0; a0 < used; a0++) { if (difference[i * width + active[a0]] !== 0) { any = true; break; } }
        if (any) { busy.push(g); break; }
      }
    }
    var tables = new Float64Array(busy.length * 256 * used);
    for (var k = 0; k < busy.length; k++) {
      var offset = k * 256 * used;
      for (var bit = 0; bit < 8; bit++) {
        var low = 1 << bit, row = (busy[k] * 8 + bit) * width;
        for (var m = 0; m < low; m++) {
          for (var e = 0; e < used; e++) {
            tables[offset + (low + m) * used + e] = tables[offset + m * used + e] + difference[row + active[e]];
          }
        }
      }
    }
    var words = swapWords(count), moved = new Float64Array(width), a = new Float64Array(width),
        b = new Float64Array(width), atLeast = 0, absObserved = Math.abs(observed);
    for (var t = 0; t < trials; t++) {
      moved.fill(0);
      for (k = 0; k < busy.length; k++) {
        g = busy[k];
        var byte = (words[t * blocks + (g >> 2)] >>> ((g & 3) * 8)) & 255, at = (k * 256 + byte) * used;
        for (e = 0; e < used; e++) { moved[active[e]] = moved[active[e]] + tables[at + e]; }
      }
      for (d = 0; d < width; d++) { b[d] = sysSum[d] - moved[d]; a[d] = baseSum[d] + moved[d]; }
      var delta = score(metric.kind, b, count, metric.weights) - score(metric.kind, a, count, metric.weights);
      if (Math.abs(delta) >= absObserved) { atLeast += 1; }
    }
    return { delta: observed * metric.scale, p: (atLeast + 1) / (trials + 1) };
  }

  // ---- state and filters ------------------------------------------------------------------------------------
  var N = DATA.source.length, SYSTEMS = DATA.systems;
  var SEGMENT_METRICS = DATA.metrics.filter(function (m) { return m.unit === "segment"; });
  var MEAN_METRICS = DATA.metrics.filter(function (m) { return m.kind === "mean"; });
  var DOC_METRICS = DATA.metrics.filter(function (m) { return m.unit === "document"; });
  var state = { view: "overview", baseline: DATA.baseline, doc: 0, sort: { key: "disagreement", descending: true },
                shownTests: 100 };
  var filters = { disagree: false, diffSystem: "", diffMetric: "", diffOp: ">=", diffValue: "", pronounClass: "",
                  phenomenon: "", severity: "", regexField: "source", regex: "" };
  var visible = [], visibleDocs = [], visibleTests = [], regexError = "";

  function fmt(x, digits) { return isFinite(x) ? x.toFixed(digits) : "–"; }
  function signed(x, digits) { return (x >= 0 ? "+" : "") + x.toFixed(digits); }
  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (key) {
      if (key === "text") { node.textContent = attributes[key]; } else if (key === "cls") { node.className = attributes[key]; }
      else { node.setAttribute(key, attributes[key]); }
    });
    (children || []).forEach(function (child) { if (child) { node.appendChild(child); } });
    return node;
  }
  function segmentScore(metric, system, line) {
    var w = metric.width, row = STATS[metric.name][system].subarray(line * w, line * w + w);
    return score(metric.kind, row, 1) * metric.scale;
  }
  var SPANS = {};  // system index -> line -> spans
  DATA.spans.forEach(function (s) {
    var bySystem = SPANS[s[0]] = SPANS[s[0]] || {};
    (bySystem[s[1]] = bySystem[s[1]] || []).push(s);
  });
  var PRONOUNS = (DATA.pronouns && DATA.pronouns.systems) || {};
  var CLASSES = [];
  Object.keys(PRONOUNS).forEach(function (system) {
    PRONOUNS[system].forEach(function (entries) {
      entries.forEach(function (e) { var key = e[0] + ": " + e[1]; if (CLASSES.indexOf(key) < 0) { CLASSES.push(key); } });
    });
  });
  CLASSES.sort();
  var PHENOMENA = [];
  DATA.tests.forEach(function (t) {
    [t.set + " / " + t.phenomenon, t.set + " / " + t.phenomenon + " / " + t["class"]].forEach(function (key) {
      if (PHENOMENA.indexOf(key) < 0) { PHENOMENA.push(key); }
    });
  });
  PHENOMENA.sort();

  function textOf(field, line) {
    if (field === "source") { return DATA.source[line]; }
    if (field === "reference") { return DATA.reference[line]; }
    if (field === "any") { return SYSTEMS.map(function (s) { return DATA.outputs[s][line]; }).join("\n"); }
    return DATA.outputs[field.slice(7)][line];
  }
  function disagree(line) {
    var first = DATA.outputs[SYSTEMS[0]][line];
    return SYSTEMS.some(function (s) { return DATA.outputs[s][line] !== first; });
  }
  function compute() {
    var pattern = null;
    regexError = "";
    if (filters.regex) {
      try { pattern = new RegExp(filters.regex, "u"); } catch (err) { regexError = err.message; }
    }
    var diffMetric = SEGMENT_METRICS.filter(function (m) { return m.name === filters.diffMetric; })[0];
    var limit = parseFloat(filters.diffValue);
    var severity = filters.severity === "" ? -1 : DATA.severities.indexOf(filters.severity);
    visible = [];
    for (var line = 0; line < N; line++) {
      if (filters.disagree && !disagree(line)) { continue; }
      if (diffMetric && filters.diffSystem && isFinite(limit)) {
        var delta = segmentScore(diffMetric, filters.diffSystem, line) - segmentScore(diffMetric, state.baseline, line);
        if (filters.diffOp === ">=" ? !(delta >= limit) : !(delta <= limit)) { continue; }
      }
      if (filters.pronounClass && !hasClass(line, filters.pronounClass)) { continue; }
      if (severity >= 0 && !hasSeverity(line, severity)) { continue; }
      if (pattern && !pattern.test(textOf(filters.regexField, line))) { continue; }
      visible.push(line);
    }
    var docs = {};
    visible.forEach(function (line) { docs[DATA.doc_of[line]] = true; });
    visibleDocs = Object.keys(docs).map(Number).sort(function (x, y) { return x - y; });
    visibleTests = DATA.tests.filter(function (t) {
      if (filters.phenomenon) {
        var key = t.set + " / " + t.phenomenon, full = key + " / " + t["class"];
        if (filters.phenomenon !== key && filters.phenomenon !== full) { return false; }
      }
      var systems = Object.keys(t.marks);
      if (filters.disagree && systems.every(function (s) { return t.marks[s] === t.marks[systems[0]]; })) { return false; }
      if (pattern) {
        var texts = filters.regexField === "source" ? [t.source] : filters.regexField === "reference" ? [t.reference]
          : filters.regexField === "any" ? systems.map(function (s) { return t.outputs[s]; })
          : [t.outputs[filters.regexField.slice(7)] || ""];
        if (!texts.some(function (text) { return pattern.test(text); })) { return false; }
      }
      return true;
    });
  }
  function hasClass(line, key) {
    return SYSTEMS.some(function (s) {
      return (PRONOUNS[s] || [])[line] && PRONOUNS[s][line].some(function (e) {
        return e[0] + ": " + e[1] === key && (e[2] > 0 || e[3] > 0);
      });
    });
  }
  function hasSeverity(line, severity) {
    return SYSTEMS.some(function (s, index) {
      return ((SPANS[index] || {})[line] || []).some(function (span) { return span[4] >= severity; });
    });
  }

  // ---- the Overview -----------------------------------------------------------------------------------------
  function overview() {
    var table = {};
    DATA.metrics.forEach(function (metric) {
      var units = metric.unit === "document" ? visibleDocs : visible;
      table[metric.name] = {};
      SYSTEMS.forEach(function (system) {
        var entry = { score: units.length ? value(metric, system, units) : NaN };
        if (system !== state.baseline && units.length) {
          var test = pairedTest(metric, state.baseline, system, units);
          entry.delta = test.delta;
          entry.p = test.p;
        }
        table[metric.name][system] = entry;
      });
    });
    return table;
  }
  function renderOverview(root) {
    var result = overview();
    root.appendChild(el("p", { text: "Every metric on the visible segments (" + visible.length + " of " + N +
      " sentences; d-BLEU on the " + visibleDocs.length + " documents with a visible sentence, whole; pronoun F1 " +
      "from the visible sentences' counts, micro-averaged as the tables' scorer does), the " +
      "difference from the baseline and its p-value: paired approximate randomization, " + DATA.trials +
      " trials, seed " + DATA.seed + "; * and bold: p < " + DATA.alpha + " (\u25B2 better, \u25BC worse)." }));
    var head = el("tr", {}, [el("th", { text: "system" })].concat(DATA.metrics.map(function (m) {
      return el("th", { text: m.name + (m.higher ? "" : " (lower is better)"), title: m.signature });
    })));
    var body = SYSTEMS.map(function (system) {
      return el("tr", { cls: system === state.baseline ? "baseline" : "", "data-system": system },
        [el("th", { text: system + (system === state.baseline ? " (baseline)" : "") })].concat(
          DATA.metrics.map(function (m) {
            var e = result[m.name][system], cell = el("td", { cls: "num", "data-metric": m.name });
            cell.appendChild(el("span", { cls: "score", text: fmt(e.score, m.digits) }));
            if (e.delta !== undefined && !isFinite(e.delta)) {
              cell.appendChild(el("span", { cls: "delta muted", text: " –" }));
            } else if (e.delta !== undefined) {
              var significant = e.p < DATA.alpha, better = m.higher ? e.delta > 0 : e.delta < 0;
              cell.appendChild(document.createTextNode(" "));
              cell.appendChild(el("span", { cls: "delta" + (significant ? " sig " + (better ? "better" : "worse") : ""),
                text: (significant ? (better ? "\u25B2" : "\u25BC") : "") + signed(e.delta, m.digits) }));
              cell.appendChild(el("span", { cls: "p muted", text: " p=" + e.p.toFixed(4) }));
            }
            return cell;
          })));
    });
    root.appendChild(el("table", { id: "overview-table" }, [el("thead", {}, [head]), el("tbody", {}, body)]));
    if (DATA.notes.length) { root.appendChild(el("p", { cls: "muted", text: DATA.notes.join(" ") })); }
  }

  // ---- Documents --------------------------------------------------------------------------------------------
  function documentRows() {
    return visibleDocs.map(function (index) {
      var doc = DATA.documents[index], lines = doc.lines.filter(function (line) { return visibleSet[line]; });
      var row = { index: index, id: doc.id, sentences: lines.length,
                  disagreement: lines.filter(disagree).length / lines.length, cells: {} };
      SYSTEMS.forEach(function (system) {
        DOC_METRICS.forEach(function (m) { row.cells[m.name + "|" + system] = value(m, system, [index]); });
        MEAN_METRICS.forEach(function (m) { row.cells[m.name + "|" + system] = value(m, system, lines); });
      });
      return row;
    });
  }
  var visibleSet = {};
  function renderDocuments(root) {
    var rows = documentRows(), key = state.sort.key, sign = state.sort.descending ? -1 : 1;
    rows.sort(function (x, y) {
      var a = key === "disagreement" ? x.disagreement : key === "id" ? x.id : x.cells[key],
          b = key === "disagreement" ? y.disagreement : key === "id" ? y.id : y.cells[key];
      return a < b ? -sign : a > b ? sign : x.index - y.index;
    });
    root.appendChild(el("p", { text: rows.length + " documents with a visible sentence. Disagreement: the share of " +
      "their visible sentences the strategies do not all translate alike. Click a column to sort; Enter or a click " +
      "opens a document." }));
    var columns = [["id", "document"], ["disagreement", "disagreement"]];
    SYSTEMS.forEach(function (system) {
      DOC_METRICS.concat(MEAN_METRICS).forEach(function (m) { columns.push([m.name + "|" + system, system + ": " + m.name]); });
    });
    var head = el("tr", {}, columns.map(function (c) {
      var th = el("th", { cls: "sortable", tabindex: "0", text: c[1] + (state.sort.key === c[0] ?
        (state.sort.descending ? " \u2193" : " \u2191") : "") });
      function sortBy() {
        state.sort = { key: c[0], descending: state.sort.key === c[0] ? !state.sort.descending : true };
        render();
      }
      th.addEventListener("click", sortBy);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(); } });
      return th;
    }));
    var body = rows.map(function (row) {
      var digits = {};
      DATA.metrics.forEach(function (m) { digits[m.name] = m.digits; });
      var tr = el("tr", { cls: "doc-row", tabindex: "0", "data-doc": row.id }, [
        el("td", { text: row.id + " (" + row.sentences + ")" }), el("td", { cls: "num", text: fmt(100 * row.disagreement, 0) + "%" })
      ].concat(columns.slice(2).map(function (c) {
        return el("td", { cls: "num", text: fmt(row.cells[c[0]], digits[c[0].split("|")[0]]) });
      })));
      function open() { state.doc = row.index; state.view = "document"; render(); }
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", function (e) {
        if (e.key === "Enter") { open(); }
        if (e.key === "ArrowDown" && tr.nextSibling) { tr.nextSibling.focus(); e.preventDefault(); }
        if (e.key === "ArrowUp" && tr.previousSibling) { tr.previousSibling.focus(); e.preventDefault(); }
      });
      return tr;
    });
    root.appendChild(el("table", { id: "documents-table" }, [el("thead", {}, [head]), el("tbody", {}, body)]));
  }

  // ---- A document -------------------------------------------------------------------------------------------
  function lcsKeep(base, words) {  // which of words are in a longest common subsequence with base
    var n = base.length, m = words.length, table = [], i, j;
    for (i = 0; i <= n; i++) { table.push(new Uint16Array(m + 1)); }
    for (i = n - 1; i >= 0; i--) {
      for (j = m - 1; j >= 0; j--) {
        table[i][j] = base[i] === words[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    var keep = new Array(m).fill(false);
    i = 0; j = 0;
    while (i < n && j < m) {
      if (base[i] === words[j]) { keep[j] = true; i++; j++; } else if (table[i + 1][j] >= table[i][j + 1]) { i++; } else { j++; }
    }
    return keep;
  }
  function translation(system, line) {
    var text = DATA.outputs[system][line], node = el("span", { cls: "hyp" });
    var severity = new Int8Array(text.length).fill(-1), metricOf = {};
    ((SPANS[SYSTEMS.indexOf(system)] || {})[line] || []).forEach(function (span) {
      for (var c = span[2]; c < span[3]; c++) {
        if (span[4] > severity[c]) { severity[c] = span[4]; metricOf[c] = span[5]; }
      }
    });
    var changed = new Uint8Array(text.length);
    if (system !== state.baseline) {
      var words = [], starts = [], re = /\S+/g, match;
      while ((match = re.exec(text)) !== null) { words.push(match[0]); starts.push(match.index); }
      var keep = lcsKeep(DATA.outputs[state.baseline][line].split(/\s+/).filter(Boolean), words);
      words.forEach(function (word, k) { if (!keep[k]) { changed.fill(1, starts[k], starts[k] + word.length); } });
    }
    var start = 0;
    for (var c = 1; c <= text.length; c++) {
      if (c === text.length || severity[c] !== severity[start] || changed[c] !== changed[start]) {
        var piece = text.slice(start, c), sev = severity[start], part;
        part = changed[start] ? el("ins", { cls: "diff", text: piece }) : document.createTextNode(piece);
        if (sev >= 0) {
          var mark = el("mark", { cls: "span-" + DATA.severities[sev], title: metricOf[start] + ": " + DATA.severities[sev],
                                 "data-severity": DATA.severities[sev] });
          mark.appendChild(part);
          part = mark;
        }
        node.appendChild(part);
        start = c;
      }
    }
    return node;
  }
  // the pooled selections (pooled+docmbr): their column "won by" names the strategy each document came from
  var POOLED = Object.keys(DATA.contexts).filter(function (s) { return DATA.contexts[s].kind === "pooled"; });
  function wonBy(system, doc) {
    var info = DATA.contexts[system];
    return info && info.kind === "pooled" ? info.won_by[doc.id] || "\u2014" : "";
  }
  function contextOf(system, line) {
    var info = DATA.contexts[system] || { kind: "unknown" }, doc = DATA.documents[DATA.doc_of[line]];
    var position = doc.lines.indexOf(line), k = info.k || 0, previous = [];
    function before(from, count) { return doc.lines.slice(Math.max(0, position - count), position).map(function (l) { return from[l]; }); }
    switch (info.kind) {
      case "own": return before(DATA.outputs[system], k - 1);
      case "reference": return before(DATA.reference, k - 1);
      case "first-pass": return info.first_pass ? before(DATA.outputs[info.first_pass], k - 1)
        : ["(its first pass is not among the systems)"];
      case "recorded": return (info.recorded && info.recorded[line]) || [];
      case "segment": return before(DATA.outputs[system], k ? position % k : 0);
      case "window": return ["(the window's later sentences; not recorded)"];
      case "draft": return info.draft ? [DATA.outputs[info.draft][line]] : ["(its draft is not among the systems)"];
      case "none": return previous;
      case "pooled": return info.won_by[doc.id] && DATA.contexts[info.won_by[doc.id]] ? contextOf(info.won_by[doc.id], line)
        : ["(its document's winner is not among the systems)"];
      default: return ["(no decode sidecar: context unknown)"];
    }
  }
  // refine's context cell: the draft it improved, the words the refinement changed struck through (a word diff)
  function draftCell(system, line) {
    var info = DATA.contexts[system] || {};
    if (info.kind !== "draft" || !info.draft) { return null; }
    var draft = DATA.outputs[info.draft][line].split(/\s+/).filter(Boolean);
    var keep = lcsKeep(DATA.outputs[system][line].split(/\s+/).filter(Boolean), draft);
    var cell = el("td", { cls: "context draft", title: "the draft (" + info.draft + "); struck through: changed by the refinement" },
      [document.createTextNode(info.draft + ": ")]);
    draft.forEach(function (word, k) {
      cell.appendChild(keep[k] ? document.createTextNode(word) : el("del", { cls: "diff", text: word }));
      if (k < draft.length - 1) { cell.appendChild(document.createTextNode(" ")); }
    });
    return cell;
  }
  function pronounText(system, line, reference) {
    var entries = ((PRONOUNS[system] || [])[line] || []).filter(function (e) { return reference ? e[3] > 0 : e[2] > 0 || e[3] > 0; });
    return entries.map(function (e) { return e[1] + (reference ? " " + e[3] : " " + e[2] + "/" + e[3]); }).join(", ");
  }
  function renderDocument(root) {
    if (!visibleDocs.length) { root.appendChild(el("p", { text: "No document has a visible sentence." })); return; }
    if (visibleDocs.indexOf(state.doc) < 0) { state.doc = visibleDocs[0]; }
    var doc = DATA.documents[state.doc], at = visibleDocs.indexOf(state.doc);
    var previous = el("button", { type: "button", text: "\u2190 previous", id: "previous-doc" });
    var next = el("button", { type: "button", text: "next \u2192", id: "next-doc" });
    previous.addEventListener("click", function () { moveDoc(-1); });
    next.addEventListener("click", function () { moveDoc(1); });
    root.appendChild(el("h2", { text: "Document " + doc.id + " (" + (at + 1) + " of " + visibleDocs.length + ")" }));
    root.appendChild(el("p", { cls: "legend muted" }, [previous, document.createTextNode(" "), next,
      el("span", { text: "  Keys: \u2190/\u2192 or p/n move between documents, Esc goes back to the list. " }),
      el("ins", { cls: "diff", text: "differs from the baseline" }), document.createTextNode(" "),
      el("mark", { cls: "span-minor", text: "minor" }), document.createTextNode(" "),
      el("mark", { cls: "span-major", text: "major" }), document.createTextNode(" "),
      el("mark", { cls: "span-critical", text: "critical" }), el("span", { text: " error span" })]));
    doc.lines.filter(function (line) { return visibleSet[line]; }).forEach(function (line) {
      var box = el("div", { cls: "sentence", "data-line": String(line) });
      box.appendChild(el("h3", { text: "Sentence " + (doc.lines.indexOf(line) + 1) + " (line " + (line + 1) + ")" }));
      box.appendChild(el("p", { cls: "src", text: "Source: " + DATA.source[line] }));
      var refPronouns = pronounText(SYSTEMS[0], line, true);
      box.appendChild(el("p", { text: "Reference: " + DATA.reference[line] + (refPronouns ? "  [pronouns: " + refPronouns + "]" : "") }));
      var head = el("tr", {}, ["system", "translation", "target context it was decoded with"].concat(POOLED.length ? ["won by"] : []).map(function (t) { return el("th", { text: t }); })
        .concat(SEGMENT_METRICS.map(function (m) { return el("th", { text: m.name }); }))
        .concat(PRONOUNS[SYSTEMS[0]] ? [el("th", { text: "pronouns (hyp/ref)" })] : []));
      var rows = SYSTEMS.map(function (system) {
        var context = contextOf(system, line);
        return el("tr", { "data-system": system, cls: system === state.baseline ? "baseline" : "" },
          [el("th", { text: system }), el("td", {}, [translation(system, line)]),
           draftCell(system, line) || el("td", { cls: "context", text: context.length ? context.join(" \u2016 ") : "\u2014" })]
            .concat(POOLED.length ? [el("td", { cls: "won-by", text: wonBy(system, doc) })] : [])
            .concat(SEGMENT_METRICS.map(function (m) { return el("td", { cls: "num", text: fmt(segmentScore(m, system, line), m.digits) }); }))
            .concat(PRONOUNS[SYSTEMS[0]] ? [el("td", { text: pronounText(system, line, false) })] : []));
      });
      box.appendChild(el("table", {}, [el("thead", {}, [head]), el("tbody", {}, rows)]));
      root.appendChild(box);
    });
  }
  function moveDoc(step) {
    var at = visibleDocs.indexOf(state.doc) + step;
    if (at >= 0 && at < visibleDocs.length) { state.doc = visibleDocs[at]; render(); }
  }

  // ---- Test sets of context ---------------------------------------------------------------------------------
  function renderTests(root) {
    if (!DATA.tests.length) { root.appendChild(el("p", { text: "No ContraPro or ctxpro set was given to this page." })); return; }
    var systems = SYSTEMS.filter(function (s) { return DATA.tests.some(function (t) { return s in t.marks; }); });
    root.appendChild(el("p", { text: visibleTests.length + " of " + DATA.tests.length + " examples visible. A mark: " +
      "the expected form is a word of the system's translation of the example's sentence (ctxpro's rule)." }));
    [["phenomenon", function (t) { return t.set + " / " + t.phenomenon; }],
     ["antecedent distance", function (t) { return t.set + " / distance " + (t.distance === null || t.distance === undefined ? "?" : t.distance); }]
    ].forEach(function (grouping) {
      var groups = {};
      visibleTests.forEach(function (t) { (groups[grouping[1](t)] = groups[grouping[1](t)] || []).push(t); });
      var head = el("tr", {}, [el("th", { text: "by " + grouping[0] }), el("th", { text: "examples" })]
        .concat(systems.map(function (s) { return el("th", { text: s }); })));
      var body = Object.keys(groups).sort().map(function (key) {
        var tests = groups[key];
        return el("tr", {}, [el("th", { text: key }), el("td", { cls: "num", text: String(tests.length) })].concat(
          systems.map(function (s) {
            var scored = tests.filter(function (t) { return s in t.marks; });
            var right = scored.filter(function (t) { return t.marks[s]; }).length;
            return el("td", { cls: "num", text: scored.length ? fmt(100 * right / scored.length, 1) + "%" : "\u2013" });
          })));
      });
      root.appendChild(el("table", { cls: "tests-summary" }, [el("thead", {}, [head]), el("tbody", {}, body)]));
    });
    visibleTests.slice(0, state.shownTests).forEach(function (t) {
      var box = el("div", { cls: "test" });
      box.appendChild(el("p", { text: t.set + " / " + t.phenomenon + " / " + t["class"] + (t.distance !== undefined &&
        t.distance !== null ? " / antecedent distance " + t.distance : "") + "; expected: \u201C" + t.expected + "\u201D" }));
      if (t.context.length) { box.appendChild(el("p", { cls: "context", text: "Context: " + t.context.join(" \u2016 ") })); }
      box.appendChild(el("p", { cls: "src", text: "Source: " + t.source }));
      box.appendChild(el("p", { text: "Reference: " + t.reference }));
      var list = el("ul");
      systems.forEach(function (s) {
        if (!(s in t.marks)) { return; }
        list.appendChild(el("li", { cls: t.marks[s] ? "mark-ok" : "mark-miss", "data-system": s,
                                    text: s + ": " + t.outputs[s] }));
      });
      box.appendChild(list);
      root.appendChild(box);
    });
    if (visibleTests.length > state.shownTests) {
      var more = el("button", { type: "button", text: "show 100 more" });
      more.addEventListener("click", function () { state.shownTests += 100; render(); });
      root.appendChild(more);
    }
  }

  // ---- the filters' controls --------------------------------------------------------------------------------
  function select(name, options, label) {
    var node = el("select", { id: "filter-" + name, "aria-label": label });
    options.forEach(function (o) {
      var option = el("option", { value: o[0], text: o[1] });
      if (String(filters[name]) === o[0]) { option.selected = true; }
      node.appendChild(option);
    });
    node.addEventListener("change", function () { filters[name] = node.value; update(); });
    return node;
  }
  function buildFilters() {
    var root = document.getElementById("filters"), systemOptions = SYSTEMS.map(function (s) { return [s, s]; });
    root.textContent = "";
    var baseline = el("select", { id: "baseline", "aria-label": "baseline" });
    SYSTEMS.forEach(function (s) { var o = el("option", { value: s, text: s }); if (s === state.baseline) { o.selected = true; } baseline.appendChild(o); });
    baseline.addEventListener("change", function () { state.baseline = baseline.value; update(); });
    root.appendChild(el("label", {}, [document.createTextNode("baseline "), baseline]));
    var disagreeBox = el("input", { type: "checkbox", id: "filter-disagree" });
    disagreeBox.checked = filters.disagree;
    disagreeBox.addEventListener("change", function () { filters.disagree = disagreeBox.checked; update(); });
    root.appendChild(el("label", {}, [disagreeBox, document.createTextNode(" strategies disagree")]));
    var value = el("input", { type: "number", step: "any", id: "filter-diff-value", "aria-label": "difference", value: filters.diffValue });
    value.addEventListener("change", function () { filters.diffValue = value.value; update(); });
    root.appendChild(el("label", {}, [document.createTextNode("segment difference: "),
      select("diffSystem", [["", "(system)"]].concat(systemOptions), "system"),
      select("diffMetric", [["", "(metric)"]].concat(SEGMENT_METRICS.map(function (m) { return [m.name, m.name]; })), "metric"),
      document.createTextNode(" \u2212 baseline "), select("diffOp", [[">=", "\u2265"], ["<=", "\u2264"]], "comparison"), value]));
    if (CLASSES.length) {
      root.appendChild(el("label", {}, [document.createTextNode("pronoun class "),
        select("pronounClass", [["", "(any)"]].concat(CLASSES.map(function (c) { return [c, c]; })), "pronoun class")]));
    }
    if (PHENOMENA.length) {
      root.appendChild(el("label", {}, [document.createTextNode("phenomenon "),
        select("phenomenon", [["", "(any)"]].concat(PHENOMENA.map(function (c) { return [c, c]; })), "phenomenon")]));
    }
    if (DATA.spans.length) {
      root.appendChild(el("label", {}, [document.createTextNode("error span at least "),
        select("severity", [["", "(any)"]].concat(DATA.severities.map(function (s) { return [s, s]; })), "severity")]));
    }
    var pattern = el("input", { type: "text", id: "filter-regex", "aria-label": "regular expression", value: filters.regex, size: "18" });
    pattern.addEventListener("change", function () { filters.regex = pattern.value; update(); });
    root.appendChild(el("label", {}, [document.createTextNode("regex over "),
      select("regexField", [["source", "source"], ["reference", "reference"], ["any", "any output"]].concat(
        SYSTEMS.map(function (s) { return ["output:" + s, s + "'s output"]; })), "text to search"), pattern]));
  }

  // ---- rendering --------------------------------------------------------------------------------------------
  var RENDERERS = { overview: renderOverview, documents: renderDocuments, document: renderDocument, tests: renderTests };
  function render() {
    var started = performance.now(), root = document.getElementById("view");
    root.textContent = "";
    Array.prototype.forEach.call(document.querySelectorAll("nav button"), function (b) {
      if (b.getAttribute("data-view") === state.view) { b.setAttribute("aria-current", "page"); } else { b.removeAttribute("aria-current"); }
    });
    RENDERERS[state.view](root);
    window.docnmtLastRenderMs = performance.now() - started;
    statusLine.className = regexError ? "error" : "";
    statusLine.textContent = regexError ? "The regular expression does not parse: " + regexError :
      visible.length + " of " + N + " sentences, " + visibleDocs.length + " of " + DATA.documents.length +
      " documents, " + visibleTests.length + " of " + DATA.tests.length + " examples of context visible. " +
      "Baseline " + state.baseline + "; paired approximate randomization, " + DATA.trials + " trials, seed " + DATA.seed + ".";
  }
  function update() {
    var started = performance.now();
    compute();
    visibleSet = {};
    visible.forEach(function (line) { visibleSet[line] = true; });
    render();
    window.docnmtLastUpdateMs = performance.now() - started;
  }
  document.addEventListener("keydown", function (e) {
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || state.view !== "document") { return; }
    if (e.key === "ArrowRight" || e.key === "n") { moveDoc(1); }
    if (e.key === "ArrowLeft" || e.key === "p") { moveDoc(-1); }
    if (e.key === "Escape") { state.view = "documents"; render(); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("nav button"), function (b) {
    b.addEventListener("click", function () { state.view = b.getAttribute("data-view"); render(); });
  });
  // for the tests and the benchmark: the Overview's numbers as printed, and the visible sentences
  window.docnmt = {
    data: DATA, filters: filters, state: state, update: update, pairedTest: pairedTest,
    draws: function (count) { var next = mulberry32(DATA.seed), out = []; while (out.length < count) { out.push(next()); } return out; },
    visible: function () { return visible.slice(); },
    printedOverview: function () {
      var result = overview(), out = {};
      DATA.metrics.forEach(function (m) {
        out[m.name] = {};
        SYSTEMS.forEach(function (s) {
          var e = result[m.name][s], cells = [fmt(e.score, m.digits)];
          if (e.delta !== undefined) {
            cells.push(isFinite(e.delta) ? signed(e.delta, m.digits) : "–", isFinite(e.delta) ? e.p.toFixed(4) : "–");
          }
          out[m.name][s] = cells;
        });
      });
      return out;
    }
  };
  try {
    document.getElementById("footer").textContent = DATA.generator + "; " + N + " sentences, " + DATA.documents.length +
      " documents, " + SYSTEMS.length + " systems.";
    buildFilters();
    update();
  } catch (err) {
    fail(err.message);
  }
})();
