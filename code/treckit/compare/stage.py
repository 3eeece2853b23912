"""``treckit compare`` as a pipeline of named steps: check the outputs, load the systems, score them, digest the
files, render every report, write them all or none (:class:`CompareJob`; :func:`treckit.stages.compare_stage`
is its keyword form).

Each run is read as ``treckit eval`` reads runs (``reading``), evaluated once and dropped in turn (progress on a
terminal); the files' digests are computed after that, on another thread beside the significance tests.  The
configs describing retrieval systems (``components``) are run first, together (warmed up, then timed in turns:
:mod:`treckit.retrieval.system`), on the queries (of the test set, or of ``queries``; a system of run files only is
run on the judged queries), their last stages keeping ``depth`` docs and held until scored; their latency is
reported.
"""
from __future__ import annotations

import contextlib
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..console.errors import InputError, content_hidden, listing, warning_without_content
from ..console.messages import say
from ..console.progress import Steps
from ..engines.budget import DEFAULT_MEMORY, MemoryLimit
from ..engines.choice import choose
from ..engines.memory import empty_run
from ..inputs.formats.common import head_lines
from ..inputs import is_irds
from ..inputs.irds import irds_queries
from ..inputs.options import RunReading
from ..inputs.reading import read_qrels, read_with
from ..inputs.sources import PathLike, check_readable, content_digest, file_digest
from ..measures.readable import AB_MEASURES, to_engine
from ..measures.registry import resolve
from ..output.files import atomic_output, outputs, refuse_overwriting_inputs
from . import report
from ..report import html as report_html
from ..report.sources import comparison_page
from ..retrieval.ranking import run_from_rankings
from ..retrieval.system import System as Retrieval, latency_summary, run_systems
from ..testsets import load_test_set
from .compare import CompareOptions, ComparedRun, Comparison, compare, score_path
from .config import load_config
from ..testsets.topics import read_queries, read_query_types

TREC_COMPARE_MEASURES = ("map", "ndcg_cut.10", "recall.100", "recip_rank")    # compare's defaults on qrels
AB_MEASURE = AB_MEASURES[0]       # seed 004's A/B on a test set: the paired t-test on ndcg_at_10 (gain 2^grade - 1) decides


@dataclass
class Outputs:
    """Where each report goes (None: not written; ``-``: standard output, for one text report)."""

    json: PathLike | None = None
    csv: PathLike | None = None
    markdown: PathLike | None = None
    latex: PathLike | None = None
    plot: PathLike | None = None
    html: PathLike | None = None

    def paths(self) -> list[PathLike | None]:
        return [self.json, self.csv, self.markdown, self.latex, self.plot, self.html]

    def check(self) -> str | None:
        """At most one text report on standard output, and no plot there; the plot's format (None: no plot)."""
        to_stdout = [k for k, p in vars(self).items() if p is not None and str(p) == "-"]
        if len(to_stdout) > 1 or "plot" in to_stdout:
            raise InputError("only one text output can go to stdout ('-')", fix="name a file for the others")
        if self.html is not None:
            report_html.require_plotly()
        return report.plot_format(self.plot) if self.plot else None


@dataclass
class CompareJob:
    """One comparison: its inputs and options (see :func:`treckit.stages.compare_stage`), and :meth:`run`."""

    qrels: PathLike
    runs: list[PathLike]
    measures: list[str] | None
    names: list[str] | None = None
    configs: list[PathLike] | None = None
    options: Any = None
    out: Outputs = field(default_factory=Outputs)
    corpus: PathLike | None = None
    queries: PathLike | None = None
    query_types: PathLike | None = None
    prepare: Callable | None = None
    digests: bool | None = None
    reading: RunReading | None = None
    test_set: PathLike | None = None
    depth: int = 1000
    memory_limit: MemoryLimit | int | None = DEFAULT_MEMORY
    engine: str = "local"
    scheduler: str | None = None
    queries_are_the_set: bool = False
    empty_run_retrieves_nothing: bool = False
    ranking: str | None = None
    order_option: bool = True
    query_text: bool = True           # the HTML report shows the queries' texts where they are known

    def __post_init__(self) -> None:
        self.reading = self.reading or RunReading()
        self.ranking = self.ranking or self.reading.ranking
        wanted = self.out.json is not None or self.out.html is not None       # the reports that show digests
        self.digests = wanted if self.digests is None else self.digests
        self.test_set_read = None          # the test set given in place of the qrels
        self.judged = None                 # the qrels, when read early for their queries
        self.systems: list[ComparedRun] = []

    # ---------------------------------------------------------------- the pipeline
    def run(self) -> Comparison:
        plot_format = self.check()
        self.load()
        self.options = self.decision_rule(self.options or CompareOptions())
        steps = [f"reading and scoring {s.run_path or s.config_path}" for s in self.systems] + [
            "significance tests", "writing outputs"]
        with ThreadPoolExecutor(max_workers=1) as pool, Steps(steps) as progress:
            files = self.files()
            pending: dict = {}
            comp = self.score(progress.next, scored=lambda: pending.update(self.start_digests(pool, files)))
            comp.ab_measure = AB_MEASURE if self.test_set_read is not None else None
            self.digest(comp, files, pending)
            rendered = self.render(comp, plot_format)
            self.write(rendered)
            progress.next()
        return comp

    def decision_rule(self, options: CompareOptions) -> CompareOptions:
        """The options with the command's default correction when none was chosen: on a test set, seed 004's A/B
        (the raw p of the paired t-test decides, the adjusted p is shown beside), else Holm's across measures."""
        if options.correction is not None:
            return options
        return dataclasses.replace(options, correction="none" if self.test_set_read is not None else "holm")

    def check(self) -> str | None:
        """Fail before the real work: the measures, the outputs, and the files read for their digests only."""
        if self.measures:
            resolve(to_engine(self.measures)[0], first_params_win=False)
        plot_format = self.out.check()
        for extra in (self.corpus, self.queries):
            if extra is not None and str(extra) != "-" and not is_irds(extra):
                check_readable(extra)
        return plot_format

    def load(self) -> None:
        """Every config checked, the test set read, the default measures, no output over an input; then the
        retrieval systems run and every system ready to be read."""
        cfgs = [load_config(p) for p in self.configs or []]
        if self.test_set is not None or str(self.qrels).endswith((".yaml", ".yml")):
            self.test_set_read = load_test_set(self.test_set or self.qrels)
            self.qrels = self.test_set or self.qrels
        if not self.measures:
            self.measures = list(AB_MEASURES if self.test_set_read is not None else TREC_COMPARE_MEASURES)
        self.read = [self.qrels, *self.runs, *(self.configs or []), *(c.run_path for c in cfgs), self.corpus,
                     self.queries, self.query_types]
        refuse_overwriting_inputs(self.read, self.out.paths())
        ran = self.run_retrieval_systems(cfgs)
        for i, cfg in enumerate(cfgs):
            if cfg.run_path is None:                          # a retrieval system, run above
                run, latency, per_query = ran[i]
                self.systems.append(ComparedRun(cfg.name, None, None, None, str(cfg.config_path), cfg.config_digest,
                                           load=lambda run=run: self.prepared(run), latency_ms=latency,
                                           latency_per_query=per_query))
                continue
            self.systems.append(ComparedRun(cfg.name, None, str(cfg.run_path), None, str(cfg.config_path),
                                       cfg.config_digest, load=self.loader(
                                           cfg.run_path, cfg.format,
                                           f"the file is named by the config {cfg.config_path}")))
        for path in self.runs:
            self.systems.append(ComparedRun(None, None, str(path), None, load=self.loader(path),
                                       score=self.streamed(path)))
        for s, n in zip(self.systems, self.names or []):
            s.name = n or s.name

    def score(self, advance: Callable[[], None], scored: Callable[[], None] | None = None) -> Comparison:
        """Every system read and scored in turn (here or on a Dask cluster), then ``scored()`` (optional),
        and the significance tests."""
        ts = self.test_set_read
        qrels = ts.to_qrels() if ts is not None else self.judged if self.judged is not None else read_qrels(
            self.qrels, layout=self.reading.layout, skip_malformed=self.reading.skip_malformed)
        query_ids = query_set(self.queries, qrels) if self.queries_are_the_set else None
        with scorer(self.engine, self.scheduler) as score_on:
            return compare(qrels, self.systems, self.measures, self.options, warn=say, advance=advance,
                           scorer=score_on, ranking=self.ranking, query_ids=query_ids, scored=scored,
                           curves=self.out.html is not None)

    def files(self) -> list[tuple[Any, Any]]:
        """The files whose digests the JSON report records: (key, path)."""
        return [("qrels", self.qrels), ("corpus", self.corpus), ("queries", self.queries)] + [
            (i, s.run_path) for i, s in enumerate(self.systems)]

    def start_digests(self, pool: ThreadPoolExecutor, files) -> dict:
        """The digests of the regular files, computed once the runs are read and scored, beside the tests
        (beside the reading they would take the cores its threads use; a pipe is read once, by the reader,
        and digested afterwards from what was read)."""
        return {key: pool.submit(self.digest_of, key, path) for key, path in files
                if self.digests and path is not None and (is_irds(path) or Path(path).is_file())}

    def digest(self, comp: Comparison, files, pending: dict) -> None:
        done = {key: f.result() for key, f in pending.items()}
        if not self.digests:
            return
        for key, path in files:
            if key not in done and path is not None:
                done[key] = self.digest_of(key, path)
        for i, s in enumerate(self.systems):
            s.run_digest = done.get(i)
        comp.digests = {k: done.get(k) for k in ("corpus", "queries", "qrels")}

    def render(self, comp: Comparison, plot_format: str | None) -> list[tuple[PathLike, str, Any]]:
        """Every report, rendered before the first is written: (path, mode, content)."""
        types = read_query_types(self.query_types) if self.query_types else None
        out = self.out
        rendered = []
        if out.json:
            rendered.append((out.json, "w", report.json_text(comp)))
        if out.csv:
            rendered.append((out.csv, "w", report.csv_text(comp)))
        if out.markdown:
            rendered.append((out.markdown, "w", report.markdown(comp, types)))
        if out.latex:
            rendered.append((out.latex, "w", report.latex(comp)))
        if out.plot:
            rendered.append((out.plot, "wb", report.plot_bytes(comp, plot_format)))
        if out.html:
            page = comparison_page(comp, types=types, texts=self.page_texts() if self.query_text else None,
                                   inputs=self.page_inputs(comp))
            rendered.append((out.html, "w", report_html.render(page, self.query_text)))
        return rendered

    def page_texts(self) -> dict[str, str] | None:
        """The queries' texts the HTML report shows: the test set's, the queries file's, or those of an id-added
        QUEST JSONL given for the query types; None when none of them is given."""
        if self.test_set_read is not None:
            return {q.query_id: q.query_text for q in self.test_set_read.queries}
        for source in (self.queries, self.query_types):
            if source is not None and (source is self.queries or str(source).endswith(".jsonl")):
                return read_queries(source)
        return None

    def page_inputs(self, comp: Comparison) -> list[tuple[str, str, str | None]]:
        """(role, name, digest) of each input, for the HTML report."""
        found = [("qrels" if self.test_set_read is None else "test set", str(self.qrels), comp.digests.get("qrels"))]
        found += [(f"run of {s.name}", str(s.run_path or s.config_path), s.run_digest or s.config_digest)
                  for s in self.systems]
        found += [(role, str(path), comp.digests.get(role)) for role, path in
                  (("corpus", self.corpus), ("queries", self.queries)) if path is not None]
        if self.query_types is not None:
            found.append(("query types", str(self.query_types), None))
        return found

    def write(self, rendered) -> None:
        """Every report or none (an error or Ctrl-C midway leaves the old files)."""
        with outputs(*self.out.paths(), inputs=self.read):
            for path, mode, data in rendered:
                with atomic_output(path, mode) as fh:
                    fh.write(data)

    # ---------------------------------------------------------------- the steps' parts
    def prepared(self, run):
        return self.prepare(run) if self.prepare else run

    def loader(self, path, fmt=None, hidden: str | None = None) -> Callable[[], Any]:
        """How a system's run is read when its turn comes (a file named by a config is no input: its lines
        stay unshown)."""
        def load():
            how = dataclasses.replace(self.reading, format=fmt) if fmt else self.reading
            with content_hidden(hidden) if hidden else contextlib.nullcontext():
                if self.empty_run_retrieves_nothing and not head_lines(path, 1, "run lines"):
                    say(f"{path}: no run lines: the system retrieved nothing, so every query scores 0")
                    run = empty_run()
                else:
                    run = read_with(how, path, lean=True,
                                    warn=warning_without_content(say, hidden) if hidden else say,
                                    qrels_source=self.qrels, order_option=self.order_option).run
            return self.prepared(run)
        return load

    def streamed(self, path) -> Callable | None:
        """A run file larger than the memory limit is evaluated in bounded memory (not when ``prepare``
        changes the run read)."""
        if self.prepare:
            return None

        def score(q, requests, k, tie_aware=None):
            return score_path(q, path, requests, k, self.reading, self.memory_limit, tie_aware)
        return score

    def query_texts(self, needed: bool) -> dict[str, str | None]:
        """The queries retrieval systems run on: the test set's, the queries file's, or (run files only, no
        texts needed) the judged ones."""
        if self.test_set_read is not None:
            return {q.query_id: q.query_text for q in self.test_set_read.queries}
        if self.queries is not None:
            return read_queries(self.queries)
        if not needed:
            self.judged = read_qrels(self.qrels, layout=self.reading.layout,
                                     skip_malformed=self.reading.skip_malformed)
            return dict.fromkeys(self.judged.table.column("qid").unique().to_pylist())
        raise InputError("a config describing a retrieval system is run on queries, and none were given",
                         fix="pass --queries QUERIES.tsv, or a test set (--test-set TS.yaml) in place of QRELS")

    def run_retrieval_systems(self, cfgs) -> dict[int, tuple]:
        """The configs describing retrieval systems, run together before anything else runs beside them
        (retrieval.system.run_systems: warmed up, then timed in turns), each to its last stage:
        {config's position: (its Run, its latency summary or None, its per-query latencies or None)}."""
        found = {i: Retrieval(c.settings, c.config_path.parent, c.name, source=str(c.config_path))
                 for i, c in enumerate(cfgs) if c.run_path is None}
        if not found:
            return {}
        texts = self.query_texts(any(r.needs_texts for r in found.values()))
        ran = {}
        for (i, retrieval), stages in zip(found.items(), run_systems(list(found.values()), texts, self.depth)):
            final = stages[retrieval.final_stage()]
            ran[i] = (run_from_rankings(final.rankings, cfgs[i].name),
                      latency_summary(final.latency_ms) if final.latency_ms else None, final.latency_ms or None)
        return ran

    def digest_of(self, key, path):
        if key == "qrels" and self.test_set_read is not None:
            return self.test_set_read.digest                      # the test set's content
        # irds:<id> qrels and queries are no files: their digests are of the judgments and the queries themselves
        if is_irds(path):
            if key == "qrels":
                return content_digest(read_qrels(path).to_dict())
            return content_digest(irds_queries(str(path)))
        return file_digest(path)


def query_set(queries: PathLike | None, qrels) -> list[str]:
    """The query ids of ``queries``, saying on stderr which have no judgments (they score 0) and which
    judged queries are not among them (they are left out)."""
    if queries is None:
        raise InputError("the query set is the queries file, and none was given", fix="pass --queries QUERIES.tsv")
    ids = list(read_queries(queries))
    if not ids:
        raise InputError("no queries in it: the queries file is the query set", path=str(queries),
                         fix="give the queries, one 'qid<TAB>text' line each")
    judged = set(qrels.table.column("qid").unique().to_pylist())
    outside = sorted(judged.difference(ids), key=lambda q: q.encode("utf-8", "surrogatepass"))
    unjudged = [q for q in ids if q not in judged]
    if unjudged:
        say(f"{len(unjudged)} of the {len(ids)} queries of {queries} {'has' if len(unjudged) == 1 else 'have'} "
            f"no judgments: {'it scores' if len(unjudged) == 1 else 'they score'} 0 ({listing(unjudged)})")
    if outside:
        one = len(outside) == 1
        say(f"{len(outside)} judged {'query is' if one else 'queries are'} not in {queries} and "
            f"{'is' if one else 'are'} left out ({listing(outside)})")
    return ids


def scorer(engine: str, scheduler: str | None):
    """Where compare scores the systems: here, in turn (None), or on a Dask cluster."""
    return choose(engine, scheduler).scorer()
