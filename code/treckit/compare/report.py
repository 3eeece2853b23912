"""Comparison outputs: stable JSON and CSV, Markdown and LaTeX tables, a PNG of per-query deltas.

JSON keys come in a fixed order (``schema_version`` first) and floats are written by Python's
shortest round-trip repr: the same inputs give byte-identical files on every machine.
"""
from __future__ import annotations

import csv
import io
import json

import numpy as np

from ..io import PathLike, atomic_output
from .compare import SCHEMA_VERSION, Comparison, significant


def to_record(comp: Comparison) -> dict:
    systems = {}
    for s in comp.systems:
        systems[s.name] = {"run_path": s.run_path, "run_digest": s.run_digest, "config_path": s.config_path,
                           "config_digest": s.config_digest, "metrics": comp.summary(s.name)}
    others = [s.name for s in comp.systems[1:]]
    per_query = []
    for i, q in enumerate(comp.qids):
        row: dict = {"qid": q}
        for s in comp.systems:
            row[s.name] = {**{m: float(comp.values[s.name][i, j]) for j, m in enumerate(comp.measures)},
                           "hits": comp.hits[s.name][i]}
        row["delta"] = {o: {m: float(comp.values[o][i, j] - comp.values[comp.baseline][i, j])
                            for j, m in enumerate(comp.measures)} for o in others}
        per_query.append(row)
    return {
        "schema_version": SCHEMA_VERSION,
        "k": comp.options.k,
        "corpus_digest": comp.digests.get("corpus"),
        "queries_digest": comp.digests.get("queries"),
        "qrels_digest": comp.digests.get("qrels"),
        "systems": systems,
        "delta": {"macro": {o: comp.delta(o) for o in others},
                  "win_tie_loss": {o: {m: dict(zip(("win", "tie", "loss"), comp.win_tie_loss(o, m)))
                                       for m in comp.measures} for o in others}},
        "tests": comp.tests,
        "per_query": per_query,
    }


def write_json(comp: Comparison, path: PathLike) -> None:
    with atomic_output(path) as fh:
        fh.write(json.dumps(to_record(comp), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def write_csv(comp: Comparison, path: PathLike) -> None:
    """``qid,system,<measures...>,hits``: one row per query and system; hits as a JSON list."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["qid", "system", *comp.measures, "hits"])
    for i, q in enumerate(comp.qids):
        for s in comp.systems:
            w.writerow([q, s.name, *(repr(float(x)) for x in comp.values[s.name][i]),
                        json.dumps(comp.hits[s.name][i], ensure_ascii=False)])
    with atomic_output(path) as fh:
        fh.write(buf.getvalue())


def _mark(comp: Comparison, m: str, system: str) -> str:
    return "" if system == comp.baseline else ("\u2020" if significant(comp, m, system) else "")


def markdown(comp: Comparison, query_types: dict[str, str] | None = None, top: int = 5) -> str:
    o = comp.options
    lines = [f"# Comparison against {comp.baseline}", "",
             f"{len(comp.qids)} queries; \u2020 = significant at alpha {o.alpha} ({o.tests[0] if o.tests else '-'}, "
             f"{o.correction} correction over {len(comp.measures) * (len(comp.systems) - 1)} comparisons).", "",
             "| system | " + " | ".join(comp.measures) + " |", "|---|" + "---|" * len(comp.measures)]
    for s in comp.systems:
        cells = []
        for m in comp.measures:
            mean = comp.column(s.name, m).mean()
            if s.name == comp.baseline:
                cells.append(f"{mean:.4f}")
            else:
                w, t, l = comp.win_tie_loss(s.name, m)
                cells.append(f"{mean:.4f}{_mark(comp, m, s.name)} ({comp.delta(s.name)[m]:+.4f}; {w}/{t}/{l})")
        lines.append(f"| {s.name} | " + " | ".join(cells) + " |")
    lines += ["", "Cells of other systems: mean (delta to the baseline; queries won/tied/lost)."]
    for s in comp.systems[1:]:
        for m in comp.measures:
            d = comp.column(s.name, m) - comp.column(comp.baseline, m)
            order = np.argsort(d, kind="stable")
            gained = [i for i in order[::-1][:top] if d[i] > 0]
            lost = [i for i in order[:top] if d[i] < 0]
            lines += ["", f"## {s.name} vs {comp.baseline}: {m}", "",
                      "Gained most: " + (", ".join(f"{comp.qids[i]} ({d[i]:+.4f})" for i in gained) or "none"),
                      "", "Lost most: " + (", ".join(f"{comp.qids[i]} ({d[i]:+.4f})" for i in lost) or "none")]
    if query_types:
        types = sorted({query_types.get(q, "(unknown)") for q in comp.qids})
        lines += ["", "## By query type", "", "| type | queries | " +
                  " | ".join(f"{s.name} {m}" for s in comp.systems for m in comp.measures) + " |",
                  "|---|---|" + "---|" * (len(comp.systems) * len(comp.measures))]
        for t in types:
            sel = np.array([query_types.get(q, "(unknown)") == t for q in comp.qids])
            lines.append(f"| {t} | {int(sel.sum())} | " + " | ".join(
                f"{comp.column(s.name, m)[sel].mean():.4f}" for s in comp.systems for m in comp.measures) + " |")
    return "\n".join(lines) + "\n"


def latex(comp: Comparison) -> str:
    """A booktabs table like ranx's: one row per system, ^{\\dagger} where significant."""
    def esc(s: str) -> str:
        return "".join("\\" + c if c in "&%$#_{}" else c for c in s)
    head = " & ".join(esc(m) for m in comp.measures)
    rows = []
    for s in comp.systems:
        cells = []
        for m in comp.measures:
            mean = comp.column(s.name, m).mean()
            sig = significant(comp, m, s.name) if s.name != comp.baseline else False
            cells.append(f"{mean:.4f}" + ("$^{\\dagger}$" if sig else ""))
        rows.append(f"{esc(s.name)} & " + " & ".join(cells) + " \\\\")
    return ("\\begin{table}[t]\n\\centering\n\\begin{tabular}{l" + "c" * len(comp.measures) + "}\n\\toprule\n"
            f"System & {head} \\\\\n\\midrule\n" + "\n".join(rows) + "\n\\bottomrule\n\\end{tabular}\n"
            f"\\caption{{$\\dagger$: significant against {esc(comp.baseline)} at $\\alpha={comp.options.alpha}$ "
            f"({esc(comp.options.correction)} correction).}}\n\\end{{table}}\n")


PLOT_WIDTH_IN, PLOT_ROW_IN, PLOT_DPI = 8.0, 2.5, 100


def plot(comp: Comparison, path: PathLike) -> None:
    """Sorted per-query deltas against the baseline, one panel per measure (8 x 2.5 inches each, 100 dpi)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(comp.measures)
    fig, axes = plt.subplots(n, 1, figsize=(PLOT_WIDTH_IN, PLOT_ROW_IN * n), dpi=PLOT_DPI, squeeze=False)
    for ax, m in zip(axes[:, 0], comp.measures):
        for s in comp.systems[1:]:
            d = np.sort(comp.column(s.name, m) - comp.column(comp.baseline, m))
            ax.bar(np.arange(d.size), d, width=1.0, alpha=0.6, label=f"{s.name} - {comp.baseline}")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title(f"{m}: per-query delta, sorted")
        ax.set_xlabel("queries")
        ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PLOT_DPI, metadata={"Software": None})
    plt.close(fig)
    with atomic_output(path, "wb") as fh:
        fh.write(buf.getvalue())


def table(comp: Comparison) -> str:
    """A plain-text summary for the terminal."""
    from rich.console import Console
    from rich.table import Table
    t = Table(title=f"mean over {len(comp.qids)} queries; \u2020 significant vs {comp.baseline}")
    t.add_column("system")
    for m in comp.measures:
        t.add_column(m, justify="right")
    for s in comp.systems:
        t.add_row(s.name, *[f"{comp.column(s.name, m).mean():.4f}{_mark(comp, m, s.name)}" for m in comp.measures])
    buf = io.StringIO()
    Console(file=buf, force_terminal=False, width=140).print(t)
    return buf.getvalue()
