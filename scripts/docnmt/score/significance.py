"""Paired significance tests shared by every metric's score file: sacrebleu's paired bootstrap resampling over
sentences (BLEU, chrF++, TER; d-BLEU over documents: :mod:`docnmt.score.sacrebleu_metrics`) and over mean segment
scores (COMET, MetricX, GEMBA: :func:`mean_bootstrap_tests`), with sacrebleu's seed, confidence interval and
p-value.

A difference is marked significant when p < :data:`ALPHA` and the scores differ: sacrebleu gives a system identical
to its baseline p = 1/(n+1), which would mark it "significant".
"""

from __future__ import annotations

#: p-value below which a paired difference is called significant.
ALPHA = 0.05


def _float(value):
    """sacrebleu's bootstrap statistics are numpy scalars (float32 for some metrics): plain floats for JSON."""
    return None if value is None else float(value)


def bootstrap_seed() -> int | None:
    """The resamples' seed as sacrebleu reads it: ``SACREBLEU_SEED``, 12345 by default; ``none``: fresh entropy."""
    import os

    seed = os.environ.get("SACREBLEU_SEED", "12345")
    return None if seed.lower() == "none" else int(seed)


def resample_indices(seed: int | None, sentences: int, n_samples: int):
    """The sentence indices of every resample (n_samples x sentences, drawn with replacement), as sacrebleu draws
    them: one generator with ``seed``, shared by every system."""
    import numpy as np

    return np.random.default_rng(seed).choice(sentences, size=(n_samples, sentences), replace=True)


def compared(score: float, base_score: float, resampled, base_resampled, identical: bool, digits: int) -> dict:
    """One system against the baseline over the same resamples: sacrebleu's p-value, and whether the difference is
    significant. sacrebleu's p-value for a zero difference is 1/(n+1) ("a zero difference should not be attributed
    to chance"); a system identical to the baseline, or with its score at ``digits`` decimals, is never marked
    significant."""
    import numpy as np
    from sacrebleu.significance import _compute_p_value

    differences = np.abs(resampled - base_resampled)
    p_value = _compute_p_value(differences - differences.mean(), abs(base_score - score))
    return {"p_value": _float(p_value), "identical_to_baseline": identical,
            "significant": bool(p_value < ALPHA and not identical and round(score, digits) != round(base_score, digits))}


class PairedBootstrap:
    """sacrebleu's paired bootstrap resampling (``sacrebleu --paired-bs``; sacrebleu.significance's ``PairedTest``
    with ``test_type="bs"``), with each system's sentence statistics and resampled scores made once.

    sacrebleu draws the same resamples for every system (a fresh generator with the fixed seed,
    ``SACREBLEU_SEED``, 12345 by default), but extracts a system's statistics and scores its 1000 resamples again
    for each baseline, and the baseline's again for each system. Here they are made once per system and shared by
    every comparison (the demo test set's scoring: 15.7 s with PairedTest, 3.9 s so), with sacrebleu's arithmetic:
    the same float32 sums, its confidence interval (``estimate_ci``) and p-value (``_compute_p_value``), so the
    numbers are sacrebleu's (a test compares them with ``PairedTest``'s). With ``SACREBLEU_SEED=none`` the resamples
    are drawn once from fresh entropy and shared by every system alike."""

    def __init__(self, systems: dict[str, list[str]], refs: list[str], metrics: dict, n_samples: int):
        self.seed = bootstrap_seed()
        self.systems, self.metrics, self.n_samples, self.sentences = systems, metrics, n_samples, len(refs)
        for metric in metrics.values():
            # what sacrebleu's Metric(references=...) does: the references' statistics, kept for every system
            metric._ref_cache = metric._cache_references([refs])
        self._stats: dict[tuple[str, str], tuple] = {}
        self._resampled: dict[tuple[str, str], object] = {}
        self._indices = None

    def signature(self, name: str) -> str:
        signature = self.metrics[name].get_signature()
        signature.update("seed", str(self.seed).lower())
        signature.update("bs", self.n_samples)
        return str(signature)

    def score(self, metric_name: str, system: str):
        """sacrebleu's corpus score of ``system`` under one metric (the same as ``corpus_score``)."""
        return self._statistics(metric_name, system)[0]

    def resampled(self, metric_name: str, system: str):
        """The scores of ``system`` on the resamples, under one metric: made once."""
        key = (metric_name, system)
        if key not in self._resampled:
            import numpy as np

            if self._indices is None:
                self._indices = resample_indices(self.seed, self.sentences, self.n_samples)
            metric, stats = self.metrics[metric_name], self._statistics(metric_name, system)[1]
            self._resampled[key] = np.array([metric._compute_score_from_stats(s.sum(0)).score
                                             for s in stats[self._indices]])
        return self._resampled[key]

    def _statistics(self, metric_name: str, system: str):
        key = (metric_name, system)
        if key not in self._stats:
            import numpy as np

            metric = self.metrics[metric_name]
            stats = metric._extract_corpus_statistics(self.systems[system], None)
            self._stats[key] = (metric._aggregate_and_compute(stats), np.array(stats, dtype="float32"))
        return self._stats[key]


def paired(test: PairedBootstrap, baseline: str) -> dict:
    """Every system of ``test`` against ``baseline`` over the same resamples: signatures, and per system and metric
    score, bootstrap mean and 95% confidence half-width, and p-value and significance."""
    from sacrebleu.significance import estimate_ci

    identical = {name: hyps == test.systems[baseline] for name, hyps in test.systems.items()}
    result = {"baseline": baseline, "signatures": {m: test.signature(m) for m in test.metrics}, "systems": {}}
    names = [baseline] + [name for name in test.systems if name != baseline]
    for metric in test.metrics:
        base_score, base_resampled = test.score(metric, baseline), test.resampled(metric, baseline)
        for name in names:
            score, resampled = test.score(metric, name), test.resampled(metric, name)
            mean, ci = estimate_ci(resampled)
            entry = {"score": round(float(score.score), 4), "mean": _float(mean), "ci": _float(ci)}
            if name != baseline:
                entry.update(compared(score.score, base_score.score, resampled, base_resampled, identical[name], 4))
            result["systems"].setdefault(name, {})[metric] = entry
    return result


# ---- paired bootstrap of mean segment scores (COMET, MetricX) --------------------------------------------
def mean_paired_bootstrap(segments: dict[str, list[float]], baseline: str, n_samples: int) -> dict:
    """Every system's mean segment score against ``baseline``'s over the same resamples (sacrebleu's paired
    bootstrap, as :class:`PairedBootstrap` does it for BLEU: its seed, confidence interval and p-value):
    score, mean, ci, and p_value/significant."""
    import numpy as np
    from sacrebleu.significance import estimate_ci

    indices = resample_indices(bootstrap_seed(), len(segments[baseline]), n_samples)
    resampled = {name: np.asarray(scores, dtype="float64")[indices].mean(axis=1) for name, scores in segments.items()}
    base_score = float(np.mean(segments[baseline]))
    result = {}
    for name, scores in segments.items():
        score = float(np.mean(scores))
        mean, ci = estimate_ci(resampled[name])
        entry = {"score": round(score, 6), "mean": float(mean), "ci": float(ci)}
        if name != baseline:
            entry.update(compared(score, base_score, resampled[name], resampled[baseline],
                                  scores == segments[baseline], 6))
        result[name] = entry
    return result


def mean_bootstrap_tests(segments: dict[str, dict[str, list]], baselines, n_samples: int,
                         signatures: dict[str, str] | None = None) -> dict:
    """A score file's ``paired_bootstrap`` for scores that are means of segment scores (COMET, MetricX, the LLM
    judge): ``segments`` is column -> system -> segment scores. For each baseline among the systems (beside another
    system), every system's :func:`mean_paired_bootstrap` per column, under the columns' ``signatures`` marked with
    the samples. A segment scored None (a judge's unparsed answer) leaves that segment out of each pair it is in."""
    systems = list(next(iter(segments.values()), {}))
    result = {}
    for baseline in baselines:
        if baseline not in systems or len(systems) < 2:
            continue
        tests = result[baseline] = {"systems": {name: {} for name in systems}}
        if signatures is not None:
            tests["signatures"] = {c: f"{s}|bs:{n_samples}" for c, s in signatures.items()}
        for column, by_system in segments.items():
            if all(v is not None for scores in by_system.values() for v in scores):
                entries = mean_paired_bootstrap(by_system, baseline, n_samples)
            else:
                entries = {}
                for name, scores in by_system.items():
                    both = [i for i, (a, b) in enumerate(zip(scores, by_system[baseline]))
                            if a is not None and b is not None]
                    if name != baseline and both:
                        pair = {baseline: [by_system[baseline][i] for i in both], name: [scores[i] for i in both]}
                        entries[name] = mean_paired_bootstrap(pair, baseline, n_samples)[name]
            for name, entry in entries.items():
                tests["systems"][name][column] = entry
    return result
