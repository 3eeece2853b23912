"""Precision-recall curves as a picture (PNG, PDF or SVG) for papers, drawn with matplotlib as compare's --plot
draws its deltas: no dates, versions or random ids in the file, so the same values give the same bytes."""
from __future__ import annotations

import io

from ..compare.report import PLOT_DPI, PLOT_METADATA, require_matplotlib

CURVE_SIZE_IN = (6.0, 4.5)
MARKERS = "os^Dv<>phx"


def curve_bytes(levels: list[float], curves: dict[str, list[float | None]], fmt: str = "png") -> bytes:
    """Mean interpolated precision at each recall level (trec_eval's iprec_at_recall), one line per system."""
    require_matplotlib()
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"svg.hashsalt": "treckit", "svg.fonttype": "none", "pdf.compression": 6}):
        fig = Figure(figsize=CURVE_SIZE_IN, dpi=PLOT_DPI)
        ax = fig.subplots()
        for i, (name, ys) in enumerate(curves.items()):
            ax.plot(levels, [float("nan") if y is None else y for y in ys], marker=MARKERS[i % len(MARKERS)],
                    markersize=4, linewidth=1.5, label=str(name).replace("$", r"\$"))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("recall")
        ax.set_ylabel("interpolated precision (mean)")
        ax.grid(True, linewidth=0.5, alpha=0.5)
        ax.legend(fontsize="small", frameon=False)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=PLOT_DPI, metadata=PLOT_METADATA[fmt])
    return buf.getvalue()
