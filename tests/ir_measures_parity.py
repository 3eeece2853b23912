"""Which ir_measures names treckit accepts, and whether each gives ir_measures' default provider's numbers:
the audit behind docs/measures-references.md.

    python tests/ir_measures_parity.py [QRELS RUN]      (default: trec_eval's graded sample, ../shared/data)

For every measure name ir_measures registers, representative parameter sets are parsed by treckit's registry
(accepted or not) and by ir_measures (its default provider).  Where both compute it, the per-query values are
compared on the run as given (score ties included) and on the same run with its ties removed (each score
made unique, the order unchanged): a difference only with ties is a tie rule, one without ties a definition.
Queries are the judged queries the run answers (ir_measures also gives every other judged query its DEFAULT).
"""
from __future__ import annotations

import contextlib
import io
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NAMES = [
    "AP", "AP@10", "AP(rel=2)", "AP(judged_only=True)", "MAP", "AP_IA", "MAP_IA", "Accuracy@10",
    "BPM(T=1.0,max_rel=4)@10", "Bpref", "BPref", "Bpref(rel=2)", "Compat", "Compat(p=0.8,normalize=False)",
    "ERR@10", "ERR@20", "ERR_IA@20", "nERR_IA@20", "alpha_DCG@20", "alpha_nDCG@20", "alpha_nDCG(alpha=0.3)@10",
    "α_nDCG@20", "α_DCG@20", "NRBP", "nNRBP", "NRBP(beta=0.8)", "P_IA@10", "StRecall@10",
    "INST(max_rel=4)", "INSQ(max_rel=4)", "IPrec@0.5", "IPrec(rel=2)@0.1", "Judged@10", "Judged",
    "RR", "MRR", "RR@10", "RR(rel=2)", "RR(judged_only=True)",
    "nDCG", "nDCG@10", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')", "nDCG(gains={0:0,1:1,2:3})@10",
    "nDCG(judged_only=True)@10",
    "NERR8(max_rel=4)@10", "NERR9(max_rel=4)@10", "NERR10(max_rel=4)", "NERR11(max_rel=4)",
    "NumQ", "NumRel", "NumRel(rel=2)", "NumRet", "NumRet(rel=1)", "NumRelRet",
    "P@10", "Precision@10", "P(rel=2)@10", "P(judged_only=True)@10", "R@100", "Recall@100", "R(judged_only=True)@100",
    "RBP", "RBP(rel=1)", "RBP(p=0.9,rel=1)", "RBP(rel=1)@10", "Rprec", "RPrec", "Rprec(rel=2)",
    "SDCG(max_rel=4)@10", "SetAP", "SetF", "SetF(beta=0.5)", "SetP", "SetP(relative=True)", "SetRelP", "SetR",
    "Success@10", "Success(rel=2)@5", "infAP",
]


def provider_of(measure) -> str:
    import ir_measures
    for p in ir_measures.DefaultPipeline.providers:
        with contextlib.suppress(Exception):
            if p.is_available() and p.supports(measure):
                return p.NAME
    return "-"


def untied(run_path: str, out: Path) -> None:
    """The run with every score unique, in treckit's (trec_eval's) order: score descending, docno descending."""
    rows = [line.split() for line in Path(run_path).read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: r[2], reverse=True)
    rows.sort(key=lambda r: float(r[4]), reverse=True)
    rows.sort(key=lambda r: r[0])
    out.write_text("".join(f"{q} Q0 {d} {i + 1} {1000 - i} {t}\n" for i, (q, _, d, _, _, t, *_) in enumerate(rows)))


def values_treckit(name: str, qrels: str, run: str) -> dict[str, float]:
    import warnings

    import treckit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = treckit.evaluate(qrels, run, [name])
    col = [c for c in df.columns if c != "qid"][0]
    return {q: v for q, v in zip(df["qid"], df[col]) if q != "all"}


def values_ir_measures(measure, qrels: str, run: str) -> dict[str, float]:
    import ir_measures
    with contextlib.redirect_stderr(io.StringIO()):
        return {m.query_id: m.value for m in ir_measures.iter_calc([measure], ir_measures.read_trec_qrels(qrels),
                                                                    ir_measures.read_trec_run(run))}


def compare(name: str, qrels: str, run: str) -> str:
    import ir_measures
    mine, theirs = values_treckit(name, qrels, run), values_ir_measures(ir_measures.parse_measure(name), qrels, run)
    common = set(mine) & set(theirs)
    worst = max((abs(mine[q] - theirs[q]) for q in common if not (math.isnan(mine[q]) and math.isnan(theirs[q]))),
                default=0.0)
    return "equal" if worst <= 1e-9 else f"differs by {worst:.2g}"


def main(argv: list[str]) -> int:
    import ir_measures

    from treckit.console.errors import InputError
    from treckit.measures.registry import parse_irm
    data = ROOT.parent / "shared" / "data" / "trec_eval"
    qrels, run = (argv + [None, None])[:2] if argv else (str(data / "qrels.rel_level"), str(data / "results.test"))
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "untied"
        untied(run, clean)
        print("| name | ir_measures default provider | treckit | on the sample, ties kept | ties removed |")
        print("|---|---|---|---|---|")
        for name in NAMES:
            measure = ir_measures.parse_measure(name)
            provider = provider_of(measure)
            try:
                accepted = parse_irm(name) is not None
                why = "accepted" if accepted else "unknown name"
            except InputError as exc:
                accepted, why = False, "refused: " + str(exc).splitlines()[0][:80]
            tied = untie = "-"
            if accepted and provider != "-":
                try:
                    tied, untie = compare(name, qrels, run), compare(name, qrels, str(clean))
                except Exception as exc:                      # a provider failing on the sample is a finding too
                    tied = untie = f"{provider} fails: {type(exc).__name__}"
            print(f"| `{name}` | {provider} | {why} | {tied} | {untie} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
