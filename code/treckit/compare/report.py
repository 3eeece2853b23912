"""Comparison outputs: stable JSON and CSV, Markdown and LaTeX tables, a plot of per-query deltas
(PNG, PDF or SVG), and the console summary.

Every output is first rendered in memory (``*_text`` / ``plot_bytes``), so a command can write all
of its files or none.  JSON keys come in a fixed order (``schema_version`` first) and floats are
written by Python's shortest round-trip repr; plots carry no dates, versions or random ids: the same
inputs give byte-identical files on every machine.
"""
from __future__ import annotations

import csv
import io
import json
import shutil

from ..dependencies import deferred
from ..console.errors import InputError, without_credentials
from ..console.tables import natural_width
from ..dependencies import install_hint
from ..inputs.sources import PathLike
from ..measures.definitions import GAINS, QUERY_SET_PHRASES
from ..output.files import atomic_output
from .compare import SCHEMA_VERSION, Comparison, significant

np = deferred("numpy")


def _named(path: PathLike | None) -> str | None:
    """A path as a report names it: a URL without its credentials."""
    return without_credentials(str(path)) if path is not None else None


def to_record(comp: Comparison) -> dict:
    systems = {}
    for s in comp.systems:
        systems[s.name] = {"run_path": _named(s.run_path), "run_digest": s.run_digest,
                           "config_path": _named(s.config_path),
                           "config_digest": s.config_digest, "metrics": comp.summary(s.name)}
        if s.latency_ms is not None:
            systems[s.name]["latency_ms"] = s.latency_ms
    others = [s.name for s in comp.systems[1:]]
    values = {s.name: comp.values[s.name].tolist() for s in comp.systems}
    deltas = {o: (comp.values[o] - comp.values[comp.baseline]).tolist() for o in others}
    per_query = []
    for i, q in enumerate(comp.qids):
        row: dict = {"qid": q}
        for s in comp.systems:
            row[s.name] = {**dict(zip(comp.measures, values[s.name][i])), "hits": comp.hits[s.name][i]}
        row["delta"] = {o: dict(zip(comp.measures, deltas[o][i])) for o in others}
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
                                       for m in comp.measures} for o in others},
                  **({"latency_ms": latency_deltas(comp)} if latency_deltas(comp) else {}),
                  **({"latency_median_ms": latency_median_deltas(comp)} if latency_median_deltas(comp) else {})},
        "definitions": {m: comp.definitions[m].to_dict() for m in comp.measures},
        "significance": significance_record(comp),
        **({"ab_test": comp.ab_decision()} if comp.ab_decision() is not None else {}),
        "tests": comp.tests,
        **({"ties": tie_record(comp)} if comp.ties is not None else {}),
        "per_query": per_query,
    }


def significance_record(comp: Comparison) -> dict:
    """Which test's p decides "significant" (and marks the means), and which p: the raw one or the adjusted one."""
    o = comp.options
    return {"rule": f"{o.deciding} < alpha", "test": o.tests[0] if o.tests else None, "alpha": o.alpha,
            "correction": o.correction, "adjusted_by": o.adjustment, "statement": decision(comp)}


def decision_phrases(comp: Comparison) -> list[str]:
    """The rule of "significant" in short phrases: the test and the p that decide, how the other p is adjusted,
    and (when an adjusted p decides) the option that gives seed 004's rule."""
    o = comp.options
    test = o.tests[0] if o.tests else "-"
    n = len(comp.measures) * (len(comp.systems) - 1)
    adjusted = f"p {o.adjustment}: adjusted over {n} comparison{'s' if n != 1 else ''}"
    if o.correction == "none":
        return [f"{test}, raw p < {o.alpha:g}", f"{adjusted}, beside"]
    return [f"{test}, p {o.correction} < {o.alpha:g}", adjusted, "--correction none: the raw p decides (seed 004's A/B)"]


def decision(comp: Comparison) -> str:
    """The rule of "significant" in words: the test and the p that decide."""
    return "; ".join(decision_phrases(comp))


def tie_statement(comp: Comparison) -> str:
    """What --tie-aware did to the comparison, in words (the table, Markdown and JSON say it alike)."""
    values = ("the means and the tests are on the tie-aware expected values (documents of equal scores in a "
              "uniformly random order)" if comp.options.tie_aware == "expected" else
              "the means and the tests are on trec_eval's values (ties ordered by doc id)")
    return (f"ties: {values}; a difference is inside the tie ranges when the two systems' [worst, best] means "
            "overlap (some order of the tied documents reverses it)")


TIE_HEADER = ("measure", "system", "baseline range", "system range", "delta trec_eval", "delta expected",
              "inside tie ranges")


def tie_cells(comp: Comparison) -> list[list[str]]:
    return [[r["measure"], r["system"],
             f"{r['baseline_values']['worst']:.4f}-{r['baseline_values']['best']:.4f}",
             f"{r['system_values']['worst']:.4f}-{r['system_values']['best']:.4f}",
             f"{r['delta_trec_eval']:+.4f}", f"{r['delta_expected']:+.4f}",
             "yes" if r["inside_tie_ranges"] else "no"] for r in comp.tie_pairs()]


def tie_record(comp: Comparison) -> dict:
    return {"tests_on": "expected" if comp.options.tie_aware == "expected" else "trec_eval",
            "statement": tie_statement(comp), "pairs": comp.tie_pairs()}


def record_text(record: dict) -> str:
    """A record as JSON: indented, except that each ``per_query`` row is one line (written by the
    json module's C encoder: a 7,000-query comparison takes a fraction of a second)."""
    rows = record.get("per_query")
    head = {k: v for k, v in record.items() if k != "per_query"}
    text = json.dumps(head, indent=2, ensure_ascii=False, allow_nan=False)
    if rows is None:
        return text + "\n"
    enc = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    body = ",\n".join("    " + enc.encode(r) for r in rows)
    return text[:-2] + ',\n  "per_query": [' + (f"\n{body}\n  " if rows else "") + "]\n}\n"


def json_text(comp: Comparison) -> str:
    return record_text(to_record(comp))


def csv_text(comp: Comparison) -> str:
    """``qid,system,<measures...>,hits``: one row per query and system; hits as a JSON list."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["qid", "system", *comp.measures, "hits"])
    values = {s.name: comp.values[s.name].tolist() for s in comp.systems}
    for i, q in enumerate(comp.qids):
        for s in comp.systems:
            w.writerow([q, s.name, *map(repr, values[s.name][i]), json.dumps(comp.hits[s.name][i], ensure_ascii=False)])
    return buf.getvalue()


def write_json(comp: Comparison, path: PathLike) -> None:
    with atomic_output(path) as fh:
        fh.write(json_text(comp))


def write_csv(comp: Comparison, path: PathLike) -> None:
    with atomic_output(path) as fh:
        fh.write(csv_text(comp))


# ------------------------------------------------------------------ the tests, as text
def _num(x, fmt: str = ".4f") -> str:
    return "–" if x is None else format(x, fmt)


def _p(x) -> str:
    return "–" if x is None else (f"{x:.2e}" if 0 < x < 1e-4 else f"{x:.4f}")


def _ci(r: dict) -> str:
    if r.get("ci_low") is None:
        return "–"
    return f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]"


def _verdict(r: dict) -> str:
    return "–" if r["significant"] is None else ("yes" if r["significant"] else "no")


def _with_ci(comp: Comparison) -> bool:
    return "bootstrap" in comp.options.tests


def test_header(comp: Comparison) -> list[str]:
    """The columns of the tests' table: "p" is the raw p, "p holm" (or "p bonferroni") the adjusted one; the
    bootstrap's interval when it runs."""
    return ["measure", "system", "test", "statistic", "p", f"p {comp.options.adjustment}",
            *(["CI of the delta"] if _with_ci(comp) else []), "effect size d", "significant"]


def test_cells(comp: Comparison) -> list[list[str]]:
    """One row per (measure, system, test): the numbers every report shows."""
    ci = _with_ci(comp)
    return [[r["measure"], r["system"], r["test"], _num(r["statistic"]), _p(r["p_value"]), _p(r["p_adjusted"]),
             *([_ci(r)] if ci else []), _num(r["effect_size"], ".3f"), _verdict(r)] for r in comp.tests]


def _rule(comp: Comparison) -> str:
    o = comp.options
    n = len(comp.measures) * (len(comp.systems) - 1)
    adjusted = f"p {o.adjustment}: adjusted per test over {n} comparison{'s' if n != 1 else ''}"
    verdict = (f"significant = raw p < {o.alpha:g} (--correction none); {adjusted}, shown beside"
               if o.correction == "none" else f"{adjusted}; significant = p {o.adjustment} < {o.alpha:g}")
    ci = f"CI = bootstrap percentile interval at {1 - o.alpha:g}; " if _with_ci(comp) else ""
    return f"two-sided tests against {comp.baseline}; {verdict}; {ci}effect size = Cohen's d of the paired deltas"


def ab_lines(comp: Comparison) -> list[str]:
    """Seed 004's A/B decision, one line per system against the baseline (none without an A/B measure)."""
    ab = comp.ab_decision()
    if ab is None:
        return []
    lines = []
    for name, r in ab["systems"].items():
        deciding = r[ab["decided_by"]]
        which = "p" if ab["decided_by"] == "p_value" else f"p {r['adjusted_by']}"
        verdict = ("no p-value: not decided" if deciding is None else
                   f"{which} {_p(deciding)} {'<' if r['significant'] else '>='} {ab['alpha']:g}: "
                   f"{'significant' if r['significant'] else 'not significant'}")
        beside = f" (p {r['adjusted_by']} {_p(r['p_adjusted'])})" if ab["decided_by"] == "p_value" else f" (p {_p(r['p_value'])})"
        lines.append(f"A/B on {ab['measure']}: {name} - {comp.baseline} {r['mean_difference']:+.4f}, {ab['test']} "
                     f"statistic {_num(r['statistic'])}, {verdict}{beside}")
    return lines


# ------------------------------------------------------------------ Markdown
def md_escape(text: str) -> str:
    """Text for a Markdown table cell: backslashes and pipes escaped, line breaks as spaces."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _mark(comp: Comparison, m: str, system: str) -> str:
    return "" if system == comp.baseline else ("\u2020" if significant(comp, m, system) else "")


def markdown(comp: Comparison, query_types: dict[str, str] | None = None, top: int = 5) -> str:
    """The Markdown report: means, ties, tests, the queries each system gained and lost most on, and
    the means by query type (``query_types``: qid -> type)."""
    lines = [*_markdown_means(comp), *_markdown_ties(comp), *_markdown_tests(comp), *_markdown_movers(comp, top),
             *_markdown_by_query_type(comp, query_types)]
    return "\n".join(lines) + "\n"


def _markdown_table(header, rows) -> list[str]:
    """A Markdown table: the header row as given, the body cells escaped."""
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows])


def _markdown_means(comp: Comparison) -> list[str]:
    """The title, the significance note and the table of means, one row per system."""
    e = md_escape
    lines = [f"# Comparison against {e(comp.baseline)}", "",
             f"{len(comp.qids)} queries; \u2020 = significant: {e(decision(comp))}.", "",
             *[e(line) + "." for line in ab_lines(comp)], *([""] if ab_lines(comp) else []),
             "| system | " + " | ".join(e(m) for m in comp.measures) + " |", "|---|" + "---|" * len(comp.measures)]
    for s in comp.systems:
        cells = [_markdown_mean_cell(comp, s.name, m) for m in comp.measures]
        lines.append(f"| {e(s.name)} | " + " | ".join(cells) + " |")
    return lines + ["", "Cells of other systems: mean (delta to the baseline; queries won/tied/lost)."]


def _markdown_mean_cell(comp: Comparison, system: str, m: str) -> str:
    """The baseline's mean; another system's mean, its mark, delta and queries won/tied/lost."""
    mean = comp.column(system, m).mean()
    if system == comp.baseline:
        return f"{mean:.4f}"
    w, t, l = comp.win_tie_loss(system, m)
    return f"{mean:.4f}{_mark(comp, m, system)} ({comp.delta(system)[m]:+.4f}; {w}/{t}/{l})"


def _markdown_ties(comp: Comparison) -> list[str]:
    if comp.ties is None:
        return []
    return ["", "## Ties", "", md_escape(tie_statement(comp)) + ".", "", *_markdown_table(TIE_HEADER, tie_cells(comp))]


def _markdown_tests(comp: Comparison) -> list[str]:
    if not comp.tests:
        return []
    return ["", "## Significance tests", "", md_escape(_rule(comp)) + ".", "",
            *_markdown_table(test_header(comp), test_cells(comp))]


def _markdown_movers(comp: Comparison, top: int) -> list[str]:
    """For each other system and measure: the ``top`` queries it gained most and lost most on."""
    e = md_escape
    lines: list[str] = []
    for s in comp.systems[1:]:
        for m in comp.measures:
            d = comp.column(s.name, m) - comp.column(comp.baseline, m)
            order = np.argsort(d, kind="stable")
            gained = [i for i in order[::-1][:top] if d[i] > 0]
            lost = [i for i in order[:top] if d[i] < 0]
            lines += ["", f"## {e(s.name)} vs {e(comp.baseline)}: {e(m)}", "",
                      "Gained most: " + _markdown_queries(comp, d, gained), "",
                      "Lost most: " + _markdown_queries(comp, d, lost)]
    return lines


def _markdown_queries(comp: Comparison, deltas, picked: list) -> str:
    return ", ".join(f"{md_escape(comp.qids[i])} ({deltas[i]:+.4f})" for i in picked) or "none"


def _markdown_by_query_type(comp: Comparison, query_types: dict[str, str] | None) -> list[str]:
    """Each system's and measure's mean over the queries of each type (queries without one: "(unknown)")."""
    if not query_types:
        return []
    e = md_escape
    types = sorted({query_types.get(q, "(unknown)") for q in comp.qids})
    lines = ["", "## By query type", "", "| type | queries | " +
             " | ".join(f"{e(s.name)} {e(m)}" for s in comp.systems for m in comp.measures) + " |",
             "|---|---|" + "---|" * (len(comp.systems) * len(comp.measures))]
    for t in types:
        sel = np.array([query_types.get(q, "(unknown)") == t for q in comp.qids])
        lines.append(f"| {e(t)} | {int(sel.sum())} | " + " | ".join(
            f"{comp.column(s.name, m)[sel].mean():.4f}" for s in comp.systems for m in comp.measures) + " |")
    return lines


# ------------------------------------------------------------------ LaTeX
LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(text: str) -> str:
    """Text that LaTeX prints as written: its ten special characters escaped in one pass."""
    return "".join(LATEX_SPECIALS.get(c, c) for c in str(text))


def latex(comp: Comparison) -> str:
    """A booktabs table like ranx's: one row per system, ^{\\dagger} where significant."""
    esc = tex_escape
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
            f"\\caption{{$\\dagger$: significant against {esc(comp.baseline)}: {esc(decision(comp))}.}}"
            "\n\\end{table}\n")


# ------------------------------------------------------------------ plots
PLOT_WIDTH_IN, PLOT_ROW_IN, PLOT_DPI = 8.0, 2.5, 100
PLOT_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
PLOT_MAX_LABELS = 40       # query-id tick labels per panel at most (every j-th query beyond that)
# what makes matplotlib's files differ from run to run: dates, its version, random ids in SVG
PLOT_METADATA = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
                 "svg": {"Creator": None, "Date": None}}


def plot_format(path: PathLike) -> str:
    """The plot format a path asks for (its suffix): png, pdf or svg; checked before any work, with whether
    matplotlib (the plots extra) is there to draw it."""
    from pathlib import Path
    fmt = PLOT_FORMATS.get(Path(str(path)).suffix.lower())
    if fmt is None:
        raise InputError(f"cannot tell the plot format of {str(path)!r}", fix="end the file name with .png, .pdf or .svg")
    require_matplotlib()
    return fmt


def require_matplotlib() -> None:
    """An error naming the plots extra when matplotlib is not installed (found without importing it)."""
    import importlib.util
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError("a plot needs matplotlib, which is not installed", fix=install_hint("plots"))


def _literal(text: str) -> str:
    """Text matplotlib prints as written (a '$' would start math mode)."""
    return str(text).replace("$", r"\$")


def plot_bytes(comp: Comparison, fmt: str = "png") -> bytes:
    """Per-query deltas against the baseline, sorted, one panel per measure (rows) and system
    (columns), 8 x 2.5 inches each at 100 dpi; the x axis names the queries."""
    require_matplotlib()
    import matplotlib
    from matplotlib.figure import Figure

    others = comp.systems[1:]
    rows, cols = len(comp.measures), len(others)
    with matplotlib.rc_context({"svg.hashsalt": "treckit", "svg.fonttype": "none", "pdf.compression": 6}):
        fig = Figure(figsize=(PLOT_WIDTH_IN * cols, PLOT_ROW_IN * rows), dpi=PLOT_DPI)
        axes = fig.subplots(rows, cols, squeeze=False)
        for r, m in enumerate(comp.measures):
            for c, s in enumerate(others):
                ax = axes[r, c]
                d = comp.column(s.name, m) - comp.column(comp.baseline, m)
                order = np.argsort(d, kind="stable")
                ax.stairs(d[order], np.arange(d.size + 1) - 0.5, fill=True, baseline=0.0, alpha=0.7)
                ax.axhline(0, color="black", linewidth=0.8)
                ax.set_xlim(-0.5, d.size - 0.5)
                step = max(1, -(-d.size // PLOT_MAX_LABELS))
                ticks = np.arange(0, d.size, step)
                ax.set_xticks(ticks, [_literal(comp.qids[i]) for i in order[ticks]], rotation=90, fontsize="x-small")
                ax.set_title(_literal(f"{s.name} \u2212 {comp.baseline}: {m}"), fontsize="small")
                ax.set_xlabel("query id (sorted by delta" + (f", every {step}th labelled)" if step > 1 else ")"),
                              fontsize="small")
                ax.set_ylabel(_literal(f"\u0394 {m}"), fontsize="small")
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=PLOT_DPI, metadata=PLOT_METADATA[fmt])
    return buf.getvalue()


def plot(comp: Comparison, path: PathLike) -> None:
    data = plot_bytes(comp, plot_format(path))
    with atomic_output(path, "wb") as fh:
        fh.write(data)


# ------------------------------------------------------------------ console
def title_lines(phrases: list[str], width: int) -> list[str]:
    """Phrases joined by '; ' on as few lines as fit ``width``; a line breaks only between phrases."""
    lines: list[str] = []
    for p in phrases:
        if lines and len(lines[-1]) + 2 + len(p) <= width:
            lines[-1] += "; " + p
        else:
            lines.append(p)
    return lines


def console_width() -> int:
    return max(40, shutil.get_terminal_size((120, 24)).columns)


def latency_deltas(comp: Comparison) -> dict:
    """Mean per-query latency of each system minus the baseline's (systems run from their configs)."""
    base = comp.systems[0].latency_ms
    return {s.name: s.latency_ms["mean"] - base["mean"] for s in comp.systems[1:]
            if base is not None and s.latency_ms is not None}


def latency_median_deltas(comp: Comparison) -> dict:
    """The median over the queries of each system's latency minus the baseline's on the same query: a stall
    in a few calls moves the mean difference, not this one."""
    base = comp.systems[0].latency_per_query
    out = {}
    for s in comp.systems[1:]:
        own = s.latency_per_query
        if base is not None and own is not None:
            out[s.name] = float(np.median([own[q] - base[q] for q in base]))
    return out


def _query_set_phrase(comp: Comparison) -> list[str]:
    return sorted({QUERY_SET_PHRASES[d.query_set] for d in comp.definitions.values()})


def _gain_phrases(comp: Comparison) -> list[str]:
    """How the nDCG columns define gain, when it is not trec_eval's (whose nDCG is linear)."""
    exp = [m for m in comp.measures if comp.definitions.get(m) is not None and comp.definitions[m].gain == "exp"]
    return [f"{', '.join(exp)}: {GAINS['exp'].split(' (')[0]}"] if exp else []


def table(comp: Comparison, width: int | None = None) -> str:
    """The terminal summary: means per system (\u2020 where significant), then every test's numbers."""
    from rich.console import Console

    width = width or console_width()
    buf = io.StringIO()
    con = Console(file=buf, force_terminal=False, width=width, highlight=False, soft_wrap=False)
    _print_lines(con, title_lines(_title_phrases(comp), width))
    _print_table_or_blocks(con, ["system", *comp.measures], ("system",), mean_cells(comp), width, 1)
    _print_lines(con, ab_lines(comp))
    _print_latencies(con, comp)
    if comp.ties is not None:
        _print_ties(con, comp, width)
    if comp.tests:
        _print_tests(con, comp, width)
    return buf.getvalue()


def _print_lines(con, lines: list[str]) -> None:
    """Lines printed as written: no rich markup, never wrapped or cropped."""
    for line in lines:
        con.print(line, markup=False, overflow="ignore", crop=False)


def _title_phrases(comp: Comparison) -> list[str]:
    first, *more = decision_phrases(comp)
    return [f"mean over {len(comp.qids)} queries", *_query_set_phrase(comp), *_gain_phrases(comp),
            f"\u2020 significant vs {comp.baseline}: {first}", *more]


def _text_table(header, left: tuple[str, ...], rows, **column):
    """A rich table of text cells (Text: no rich markup in them); the columns named in ``left`` flush left,
    the others right."""
    from rich.table import Table
    from rich.text import Text
    t = Table()
    for h in header:
        t.add_column(Text(h), justify="left" if h in left else "right", **column)
    for row in rows:
        t.add_row(*map(Text, row))
    return t


def mean_cells(comp: Comparison) -> list[list[str]]:
    """One row per system: its name, then its mean of each measure (\u2020 where significant)."""
    return [[s.name, *[f"{comp.column(s.name, m).mean():.4f}{_mark(comp, m, s.name)}" for m in comp.measures]]
            for s in comp.systems]


def _print_latencies(con, comp: Comparison) -> None:
    """Each timed system's latency, with its difference to the baseline's mean when both were timed."""
    deltas, medians = latency_deltas(comp), latency_median_deltas(comp)
    for s in comp.systems:
        if s.latency_ms is not None:
            lat = s.latency_ms
            versus = ""
            if s.name in deltas:
                median = f", median {medians[s.name]:+.2f} ms" if s.name in medians else ""
                versus = f" (vs {comp.baseline}: mean {deltas[s.name]:+.2f} ms{median} per query)"
            _print_lines(con, [f"latency {s.name}: p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, "
                               f"mean {lat['mean']:.2f} ms, IQR {lat['iqr']:.2f} ms, min {lat['min']:.2f}, "
                               f"max {lat['max']:.2f}" + versus])


def _print_ties(con, comp: Comparison, width: int) -> None:
    """What the tie ranges mean, then each system's ranges against the baseline's (:func:`_print_table_or_blocks`)."""
    _print_lines(con, title_lines([p.strip() for p in tie_statement(comp).split(";")], width))
    _print_table_or_blocks(con, TIE_HEADER, ("measure", "system", "inside tie ranges"), tie_cells(comp), width, 2)


def _print_tests(con, comp: Comparison, width: int) -> None:
    """The tests' rule, then their numbers (:func:`_print_table_or_blocks`)."""
    _print_lines(con, title_lines([p.strip() for p in _rule(comp).split(";")], width))
    _print_table_or_blocks(con, test_header(comp), ("measure", "system", "test", "significant"), test_cells(comp),
                           width, 3)


def _print_table_or_blocks(con, header, left: tuple[str, ...], cells, width: int, key_columns: int) -> None:
    """A table of the cells when it fits the console, else one block of lines per row (its first
    ``key_columns`` cells joined by " / ", then "header value" for the others): a number is never cut short."""
    t = _text_table(header, left, cells, no_wrap=True)
    if natural_width(t) <= width:
        con.print(t)
        return
    for row in cells:
        fields = [" / ".join(row[:key_columns])] + [f"{h} {v}" for h, v in zip(header[key_columns:], row[key_columns:])]
        _print_lines(con, title_lines(fields, width))
