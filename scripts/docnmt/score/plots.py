"""Plots for the Snakemake report, from the same manifest as the tables (:mod:`docnmt.score.tables`).

- ``bleu``: BLEU per strategy, one group of bars per task and evaluation set;
- ``pronouns``: pronoun gender and formality F1 per strategy (every column,
  also those the reporting rule leaves out of Table 4: their titles say so);
- ``cost``: quality against decoding cost: test BLEU against decoder
  positions relative to sentence-level, one point per strategy and task;
- ``cxmi``: a histogram of the reference's P-CXMI, one per task and
  evaluation set (:mod:`docnmt.score.cxmi`);
- ``ctxpro``: ctxpro accuracy per strategy, one group of bars per task, set and phenomenon (sentence-level against
  the strategies that see context; :mod:`docnmt.score.ctxpro`);
- ``mbr``: each test-set metric (BLEU, chrF++, d-BLEU, TER) of one strategy with MBR selection against the
  candidate count, beside the strategy's beam-best (config ``mbr.curve``; :mod:`docnmt.decode.mbr`).

CLI::

    python -m docnmt.score.plots {bleu,pronouns,cost,cxmi,mbr,ctxpro} --manifest manifest.json --output plot.png
"""

from __future__ import annotations

from pathlib import Path

from ..train.curves import new_figure, save_figure
from .ctxpro import phenomena_shown
from .tables import add_manifest_arguments, read_manifest
from ..textio import cli_errors, load_json
from ..manual import argument_parser


def _grouped_bars(ax, strategies: list[str], groups: list[tuple[str, dict]]) -> None:
    """Bars: x = strategy, one bar per group; missing values are left out."""
    width = 0.8 / max(1, len(groups))
    for g, (label, values) in enumerate(groups):
        xs = [i + g * width - 0.4 + width / 2 for i, s in enumerate(strategies) if values.get(s) is not None]
        ys = [values[s] for s in strategies if values.get(s) is not None]
        ax.bar(xs, ys, width, label=label, color=f"C{g}")
    ax.set_xticks(range(len(strategies)))
    ax.set_xticklabels(strategies, rotation=35, ha="right")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))


def plot_bleu(manifest: dict, output: Path) -> None:
    strategies = manifest["strategies"]
    groups = []
    for task, spec in manifest["tasks"].items():
        for evalset, path in spec["bleu_ter"].items():
            data = load_json(path, "BLEU/TER score file")
            groups.append((f"{task} {evalset}", {s: e["BLEU"]["score"] for s, e in data["systems"].items()}))
    plt, fig, ax = new_figure(9.0, 4.2)
    _grouped_bars(ax, strategies, groups)
    ax.set_ylabel("BLEU")
    ax.set_title("BLEU per search strategy")
    save_figure(plt, fig, output)


def plot_pronouns(manifest: dict, output: Path) -> None:
    strategies = manifest["strategies"]
    groups = []
    for task, spec in manifest["tasks"].items():
        for evalset, path in spec.get("pronoun_f1", {}).items():
            data = load_json(path, "pronoun score file")
            for category in ("gender", "formality"):
                if not any(n for e in data["systems"].values() for n in e[category]["examples"].values()):
                    continue  # no reference example at all (e.g. formality on ContraPro)
                values = {s: None if e[category]["f1"] is None else e[category]["f1"] * 100  # None: the fork's NaN
                          for s, e in data["systems"].items()}
                reported = all(e[category]["reported"] for e in data["systems"].values())
                groups.append((f"{task} {evalset} {category}" + ("" if reported else " (below the example rule)"),
                               values))
    plt, fig, ax = new_figure(9.0, 4.2)
    _grouped_bars(ax, strategies, groups)
    ax.set_ylabel("F1 (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Pronoun translation F1 per search strategy")
    save_figure(plt, fig, output)


def plot_cost(manifest: dict, output: Path) -> None:
    plt, fig, ax = new_figure(7.5, 4.4)
    markers = "osD^v<>px*"
    for t, (task, spec) in enumerate(manifest["tasks"].items()):
        bleu = load_json(spec["bleu_ter"]["test"], "BLEU/TER score file")["systems"]
        sidecars = {s: load_json(p, "decode sidecar") for s, p in spec["sidecars"].items()}
        base = sidecars.get("sentence-level")
        for n, strategy in enumerate(manifest["strategies"]):
            if strategy not in sidecars or strategy not in bleu or base is None:
                continue
            entry = sidecars[strategy]
            ratio = entry.get("decoder_positions_with_first_pass", entry["decoder_positions"]) / base["decoder_positions"]
            ax.scatter(ratio, bleu[strategy]["BLEU"]["score"], color=f"C{n}", marker=markers[t % len(markers)],
                       label=strategy if t == 0 else None)
    ax.set_xscale("log")
    ax.set_xlabel("decoder positions relative to sentence-level (log scale)")
    ax.set_ylabel("test BLEU")
    ax.set_title("Quality against decoding cost (marker shape: task)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.02, 0.5))
    save_figure(plt, fig, output)


def plot_cxmi(manifest: dict, output: Path) -> None:
    from .sentence_file import read_sentences

    plt, fig, ax = new_figure(7.5, 4.2)
    values = {}
    for task, spec in manifest["tasks"].items():
        for evalset, path in spec.get("cxmi_sentences", {}).items():
            values[f"{task} {evalset}"] = [row["p_cxmi"] for row in read_sentences(path)]
    everything = [v for vs in values.values() for v in vs]
    low, high = (min(everything), max(everything)) if everything else (-1.0, 1.0)
    bins = [low + (high - low) * i / 40 for i in range(41)] if high > low else 40
    for n, (label, vs) in enumerate(values.items()):
        mean = sum(vs) / len(vs) if vs else float("nan")
        ax.hist(vs, bins=bins, histtype="step", linewidth=1.5, color=f"C{n}",
                label=f"{label} (CXMI {mean:.3f}, {len(vs)} sentences)")
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("P-CXMI of the reference sentence (nats)")
    ax.set_ylabel("sentences (log scale)")
    ax.set_title("How much each sentence's translation uses its context")
    ax.grid(True, alpha=0.3)
    if values:
        ax.legend(fontsize="small", loc="upper right")
    else:
        ax.set_title("No P-CXMI file in the manifest (no task with a document-level model)")
    save_figure(plt, fig, output)


def plot_mbr(manifest: dict, output: Path) -> None:
    """Each test-set metric of one strategy with MBR selection against its candidate count (config mbr.curve)."""
    from ..decode.variants import parse_system, system_name

    curve = manifest.get("mbr_curve")
    metrics = ("BLEU", "chrF++", "d-BLEU", "TER")
    plt, fig, axes = new_figure(10.0, 3.2, ncols=len(metrics))
    if not curve:
        axes[0].set_title("No MBR candidate-count curve in the manifest (config mbr.curve)")
        save_figure(plt, fig, output)
        return
    counts = sorted(curve["counts"])
    for n, (task, systems) in enumerate(curve["tasks"].items()):
        strategy = parse_system(systems[0])[0]
        data = load_json(manifest["tasks"][task]["bleu_ter"]["test"], "BLEU/TER score file")["systems"]
        names = {c: system_name(strategy, None if c == curve["counts"][0] else c) for c in counts}
        for ax, metric in zip(axes, metrics):
            points = [(c, data[names[c]][metric]["score"]) for c in counts if metric in data.get(names[c], {})]
            ax.plot([c for c, _ in points], [v for _, v in points], marker="o", color=f"C{n}",
                    label=f"{task}: {strategy}, MBR")
            beam = data.get(strategy, {}).get(metric)
            if beam:
                ax.axhline(beam["score"], color=f"C{n}", linestyle=":", linewidth=1, label=f"{task}: {strategy}")
    for ax, metric in zip(axes, metrics):
        ax.set_xscale("log", base=2)
        ax.set_xticks(counts, [str(c) for c in counts])
        ax.set_xlabel("candidates")
        ax.set_title(metric + (" (lower is better)" if metric == "TER" else ""))
        ax.grid(True, alpha=0.3)
    axes[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(plt, fig, output)


def plot_cad(manifest: dict, output: Path) -> None:
    """Context-aware decoding's alpha sweep (config cad.sweep): test-set BLEU and pronoun gender F1 of one strategy
    decoded at each alpha, and ContraPro accuracy of the document model ranking by the same score."""
    from ..decode.contrastive import sweep_system

    sweep = manifest.get("cad_sweep")
    panels = ("test BLEU", "test gender F1", "ContraPro accuracy")
    plt, fig, axes = new_figure(10.0, 3.2, ncols=len(panels))
    if not sweep:
        axes[0].set_title("No alpha sweep in the manifest (config cad.sweep)")
        save_figure(plt, fig, output)
        return
    alphas = sweep["alphas"]
    for n, (task, strategy) in enumerate(sweep["tasks"].items()):
        spec = manifest["tasks"][task]
        names = {a: sweep_system(strategy, a, sweep["alpha"]) for a in alphas}
        bleu = load_json(spec["bleu_ter"]["test"], "BLEU/TER score file")["systems"]
        pronouns = (load_json(spec["pronoun_f1"]["test"], "pronoun score file")["systems"]
                    if spec.get("pronoun_f1") else {})
        contrapro = (load_json(spec["contrapro_accuracy"]["document"], "ContraPro accuracy file").get("cad", [])
                     if spec.get("contrapro_accuracy") else [])
        series = ([(a, bleu[names[a]]["BLEU"]["score"]) for a in alphas if names[a] in bleu],
                  [(a, 100 * pronouns[names[a]]["gender"]["f1"]) for a in alphas
                   if pronouns.get(names[a], {}).get("gender", {}).get("f1") is not None],
                  sorted((e["alpha"], 100 * e["overall"]["accuracy"]) for e in contrapro
                         if e["overall"]["accuracy"] is not None))
        for ax, points in zip(axes, series):
            ax.plot([a for a, _ in points], [v for _, v in points], marker="o", color=f"C{n}",
                    label=f"{task}: {strategy}, CAD")
    for ax, title in zip(axes, panels):
        ax.set_xlabel("alpha")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    axes[-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(plt, fig, output)


def plot_ctxpro(manifest: dict, output: Path) -> None:
    """ctxpro accuracy per phenomenon: sentence-level against the strategies that see context, one group of bars
    per task and set."""
    strategies = manifest["strategies"]
    groups = []
    for task, spec in manifest["tasks"].items():
        for path in spec.get("ctxpro_accuracy", {}).values():
            data = load_json(path, "ctxpro score file")
            for phenomenon in phenomena_shown(data) or [None]:  # a set of several: one group each
                label = f"{task} {data['set']}" + (f" {phenomenon}" if phenomenon else "")
                groups.append((label, {s: e["accuracy"] if phenomenon is None else e["phenomena"][phenomenon]["accuracy"]
                                       for s, e in data["systems"].items()}))
    plt, fig, ax = new_figure(9.0, 4.2)
    _grouped_bars(ax, strategies, groups)
    baseline = groups[0][1].get("sentence-level") if len(groups) == 1 else None
    if baseline is not None:
        ax.axhline(baseline, color="black", linewidth=0.8, linestyle=":")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 105)
    ax.set_title("ctxpro: the form the context asks for, per search strategy")
    save_figure(plt, fig, output)


PLOTS = {"bleu": plot_bleu, "pronouns": plot_pronouns, "cost": plot_cost, "cxmi": plot_cxmi, "mbr": plot_mbr,
         "cad": plot_cad, "ctxpro": plot_ctxpro}


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.plots", __doc__.split("\n\n")[0])
    parser.add_argument("plot", choices=list(PLOTS))
    add_manifest_arguments(parser)
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    PLOTS[args.plot](read_manifest(args), args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    main()
