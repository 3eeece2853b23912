# treckit pipeline: ground truth -> qrels -> run -> evaluation, on the bundled sample by default.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
OUT    ?= outputs
QUEST  ?= data/quest_sample/test.jsonl
RUN    ?= data/quest_sample/bm25_predictions.jsonl
RUN_NAME ?= bm25
# the second system of the compare step: the sample's dense run when QUEST is the sample; with your own
# QUEST, set RUN2 (and RUN2_NAME) to compare two of your runs, or leave it empty to skip the compare step
SAMPLE_QUEST = data/quest_sample/test.jsonl
RUN2   ?= $(if $(filter $(SAMPLE_QUEST),$(QUEST)),data/quest_sample/dense_predictions.jsonl,)
RUN2_NAME ?= dense
# query types for the compare report: the id-added copy of QUEST if stage 1 wrote one (QUEST had no
# ids), else QUEST itself (its own ids and metadata)
ID_ADDED = $(OUT)/quest_id_added.jsonl
CUTOFFS ?= 1 5 10 20 50 100

.PHONY: demo all qrels run eval compare testsets quest serve test coverage fuzz fuzz-service fuzz-reference fuzz-hostile bench clean venv docs-screenshot

demo: compare testsets
	@echo "demo: the HTML reports are $(OUT)/compare.html and $(OUT)/testset.html (open them in a browser)"

all: eval

# The light install (what `make demo` and every command need): treckit, editable, and its runtime
# dependencies. Extras install on demand into the same virtualenv: $(VENV)/.installed-EXTRA for each extra of
# pyproject.toml (plots, report, service, dask, irds, bench, dev: everything `make test` needs).
# Bytecode: pip compiles nothing; then treckit's code and the dependencies' modules are compiled, their own
# test suites left out (half the bytecode pip would write), so that start-up never compiles (also where Python
# may not write bytecode: PYTHONDONTWRITEBYTECODE). A dependency's file that does not compile (a template named
# .py) is its own business: only treckit's code must.
PIP_INSTALL = $(PY) -m pip install -q --no-compile
COMPILE = $(PY) -m compileall -q -j 0 code && { $(PY) -m compileall -qq -j 0 -x 'site-packages/.*/tests?/' $(VENV)/lib || true; }

# pip>=23.1: editable installs from pyproject.toml (a no-op where pip is newer)
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q 'pip>=23.1'
	$(PIP_INSTALL) -e .
	$(COMPILE)
	touch $@

$(VENV)/.installed-%: $(VENV)/.installed
	$(PIP_INSTALL) -e '.[$*]'
	$(COMPILE)
	touch $@

venv: $(VENV)/.installed

qrels: $(VENV)/.installed
	rm -f $(ID_ADDED)
	$(PY) code/evaluation/preprocess_qrels.py --input $(QUEST) --output $(OUT)/test_qrels --id_added $(ID_ADDED)

run: qrels
	$(PY) code/evaluation/preprocess_run.py --input $(RUN) --run_name $(RUN_NAME) --gold $(QUEST) --output $(OUT)/$(RUN_NAME).trec

# --cross-check: every number printed (and written) is recomputed with ir_measures (pytrec_eval under it) first;
# a difference beyond 1e-9 stops the chain (exit 3, naming the measure, the queries and both values)
eval: run
	$(PY) code/evaluation/evaluate.py --run $(OUT)/$(RUN_NAME).trec --qrels $(OUT)/test_qrels --cutoffs $(CUTOFFS) --output $(OUT)/$(RUN_NAME)_results.json --cross-check
	$(VENV)/bin/treckit eval --cross-check -m map -m recip_rank -m ndcg_cut.10 -m recall.100 $(OUT)/test_qrels $(OUT)/$(RUN_NAME).trec

# stage 4: a second sample system against the first, as a table and as JSON, CSV, Markdown and LaTeX; with PLOT=1
# also a PNG of the per-query deltas (the plots extra, matplotlib, is installed then)
PLOT ?=
compare: eval $(VENV)/.installed-report $(if $(PLOT),$(VENV)/.installed-plots)
ifeq ($(strip $(RUN2)),)
	@echo "compare: skipped (set RUN2=predictions.jsonl to compare a second system with $(RUN_NAME))"
else
	$(PY) code/evaluation/preprocess_run.py --input $(RUN2) --run_name $(RUN2_NAME) --gold $(QUEST) --output $(OUT)/$(RUN2_NAME).trec
	$(VENV)/bin/treckit compare $(OUT)/test_qrels $(OUT)/$(RUN_NAME).trec $(OUT)/$(RUN2_NAME).trec \
	  -m ndcg_cut.10 -m recall.10 -m recip_rank -m map \
	  --query-types $$(test -f $(ID_ADDED) && echo $(ID_ADDED) || echo $(QUEST)) \
	  --out $(OUT)/compare.json --csv $(OUT)/compare.csv --markdown $(OUT)/compare.md \
	  --latex $(OUT)/compare.tex --html $(OUT)/compare.html $(if $(PLOT),--plot $(OUT)/compare.png)
	$(if $(PLOT),,@echo "compare: no plot drawn (make demo PLOT=1 installs matplotlib and draws $(OUT)/compare.png)")
endif

# stage 5: a labelled test set: validate it, RQ of the bag-of-words baseline, a retrieval function through
# the runner, and the regression gate against the stored baseline
TEST_SET ?= data/test_sets/clinical_v1.yaml
testsets: $(VENV)/.installed $(VENV)/.installed-report
	$(VENV)/bin/treckit testset validate $(TEST_SET)
	$(VENV)/bin/treckit rq --test-set $(TEST_SET) --corpus data/test_sets/documents.jsonl --baseline bow --out $(OUT)/rq.json
	$(VENV)/bin/treckit testset eval $(TEST_SET) --function data/test_sets/sample_retriever.py:search --no-cache \
	  --out $(OUT)/testset_results.json --markdown $(OUT)/testset_results.md --html $(OUT)/testset.html
	$(VENV)/bin/treckit gate --baseline data/test_sets/baseline_results.json --current $(OUT)/testset_results.json \
	  --markdown $(OUT)/gate.md

# offline QUEST pipeline: gold -> qrels, corpus -> BM25 and bag-of-words runs -> RRF fusion -> evaluation,
# the per-component table, and a comparison. QUEST_DIR holds documents.jsonl and test.jsonl (QUEST's own
# files work as they are); SYSTEM is a systems config over that corpus.
QUEST_DIR ?= data/quest_corpus
SYSTEM ?= $(QUEST_DIR)/system.yaml
QOUT = $(OUT)/quest
quest: $(VENV)/.installed
	$(VENV)/bin/treckit qrels $(QUEST_DIR)/test.jsonl -o $(QOUT)/test_qrels --id-added $(QOUT)/test_id_added.jsonl
	$(VENV)/bin/treckit retrieve --corpus $(QUEST_DIR)/documents.jsonl --queries $(QUEST_DIR)/test.jsonl \
	  --method bm25 -k 100 --index $(QOUT)/bm25_index -o $(QOUT)/bm25.trec
	$(VENV)/bin/treckit retrieve --corpus $(QUEST_DIR)/documents.jsonl --queries $(QUEST_DIR)/test.jsonl \
	  --method bow -k 100 -o $(QOUT)/bow.trec
	$(VENV)/bin/treckit fuse $(QOUT)/bm25.trec $(QOUT)/bow.trec --method rrf --k 60 -o $(QOUT)/rrf.trec
	$(VENV)/bin/treckit eval -m map -m recip_rank -m ndcg_cut.10 -m recall.10,100 $(QOUT)/test_qrels $(QOUT)/bm25.trec
	$(VENV)/bin/treckit system eval $(SYSTEM) --qrels $(QOUT)/test_qrels --queries $(QUEST_DIR)/test.jsonl \
	  --query-types $(QOUT)/test_id_added.jsonl --no-cache --out $(QOUT)/system.json
	$(VENV)/bin/treckit compare $(QOUT)/test_qrels $(QOUT)/bm25.trec $(QOUT)/rrf.trec -m ndcg_cut.10 -m recall.10 \
	  --out $(QOUT)/compare.json --markdown $(QOUT)/compare.md

# the evaluation service on the sample: the sample system answers test sets sent without a run
PORT ?= 8000
serve: $(VENV)/.installed-service
	$(VENV)/bin/treckit serve --port $(PORT) --config data/test_sets/server.yaml

# two workers (pytest-xdist); the tests of a file marked xdist_group share one worker, so that what its module-wide
# fixtures build (the wheel of the install test) is built once
TEST_WORKERS ?= 2
test: $(VENV)/.installed-dev
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup tests

# the suite under coverage, subprocesses and Dask workers included (tests/README.md): the report per module, then
# the modules under COVERAGE_FLOOR percent (exit 1 when there are any); TESTS="tests/measures ..." measures part of it
COVERAGE_FLOOR ?= 80
TESTS ?= tests
coverage: $(VENV)/.installed-dev
	rm -f .coverage .coverage.*
	COVERAGE_FILE=$(CURDIR)/.coverage $(PY) -m coverage run --source=$(CURDIR)/code -m pytest $(TESTS) $(PYTEST_ARGS)
	$(PY) -m coverage combine -q
	$(PY) -m coverage report
	$(PY) -m coverage json -q -o $(OUT)/coverage.json
	$(PY) tests/coverage_floor.py $(OUT)/coverage.json $(COVERAGE_FLOOR)

# differential fuzz against trec_eval 10.0 (../shared/tools/trec_eval or $TRECKIT_TREC_EVAL): CASES seeded cases,
# a reproducer for each difference in $(OUT)/fuzz/ (SUMMARY.txt lists them); MINIMISE=1 also shrinks each one;
# the same cases again streamed (a 1 KiB budget, 64-byte blocks) and with every fast path taken on small data;
# then the service under schemathesis (fuzz-service) and the gdeval and ndeval reference tools (fuzz-reference)
CASES ?= 5000
START ?= 0
fuzz: $(VENV)/.installed-dev fuzz-service fuzz-reference fuzz-hostile
	$(PY) tests/fuzz_main.py --cases $(CASES) --start $(START) --out $(OUT)/fuzz $(if $(MINIMISE),--minimise)
	$(PY) tests/fuzz_main.py --cases $(CASES) --start $(START) --out $(OUT)/fuzz-streamed --variant streamed
	$(PY) tests/fuzz_main.py --cases $(CASES) --start $(START) --out $(OUT)/fuzz-tiny --variant tiny

# the evaluation service under schemathesis: SERVICE_CASES requests generated from its OpenAPI schema (seeded:
# SERVICE_SEED), following it and breaking it, against a real `treckit serve`; any 5xx answer fails
SERVICE_CASES ?= 1000
SERVICE_SEED ?= 20
fuzz-service: $(VENV)/.installed-dev
	$(PY) tests/fuzz_service.py --cases $(SERVICE_CASES) --seed $(SERVICE_SEED)

# differential fuzz of gdeval's, ndeval's and the C/W/L measures: REF_CASES seeded cases per tool against gdeval.pl
# (perl; its CSV, and gdeval.nDCG@k / ERR@k by name in treckit eval), pyndeval (and ir_measures' diversity names, also
# by name in treckit eval over subtopic qrels: pyndeval-names), ir_measures' compat provider (Compat),
# cwl-eval (its values, and each name through treckit.evaluate) and, when $$TRECKIT_NDEVAL names one, an ndeval binary; each
# difference to $(OUT)/fuzz_reference/<tool>/<seed>/, the counts to $(OUT)/fuzz_reference/SUMMARY.txt
REF_CASES ?= 3000
REF_TOOL ?= all
fuzz-reference: $(VENV)/.installed-dev
	$(PY) tests/fuzz_reference.py --tool $(REF_TOOL) --cases $(REF_CASES) --start $(START) --out $(OUT)/fuzz_reference

# the longer randomized pass of each hostile-input class (tests/hostile/README.md): HOSTILE_CASES attacks per class,
# seeded by START; findings to $(OUT)/fuzz_hostile/SUMMARY.txt (exit 1 when there is any)
HOSTILE_CASES ?= 200
fuzz-hostile: $(VENV)/.installed-dev
	$(PY) tests/fuzz_hostile.py --cases $(HOSTILE_CASES) --seed $(START) --out $(OUT)/fuzz_hostile

# docs/report_compare.png: the sample's compare page at 1280x800 in headless Chromium (Debian's chromium and the dev
# extra's playwright), as docs/reports.md shows it
docs-screenshot: compare $(VENV)/.installed-dev
	$(PY) docs/screenshot.py $(OUT)/compare.html docs/report_compare.png

bench: $(VENV)/.installed-bench
	$(PY) -m bench.run_bench

clean:
	rm -rf $(OUT)/* $(VENV)
