"""Every size at which treckit switches to a faster way of doing the same work, in one place.

Each name is read at the moment of the decision (``thresholds.NAME``, never copied), so a test can
lower or raise it with ``monkeypatch.setattr(thresholds, NAME, value)`` and run both sides of the
branch on small data (tests/engines/test_thresholds.py does so for every one).  Both sides must give the
same result; only time and memory differ.  The bounds on hostile input at the end are no switch: past them,
input is refused.
"""
from __future__ import annotations

# ---------------------------------------------------------------- reading files (formats/)
TREC_RUN_FAST_MIN_BYTES = 1 << 20       # runs this large are read by Arrow's CSV reader, smaller ones line by line
TREC_QRELS_FAST_MIN_BYTES = 1 << 16     # the same for qrels (the line reader names the bad line; small files are quick)
JSONL_FAST_MIN_BYTES = 1 << 16          # JSON-lines runs this large go through Arrow's JSON reader
ARROW_BLOCK_BYTES = 1 << 24             # Arrow's JSON reader takes the file a block of this many bytes at a time (one chunk each)
ARROW_PARALLEL_BLOCK_BYTES = 1 << 23    # TREC files are cut into blocks of whole lines this large, parsed side by side
                                        # (one per core); columns read only to be checked are dropped block by block
GZIP_READ_BYTES = 1 << 18               # gzip data is read this many compressed bytes at a time ...
INFLATE_PIECE_BYTES = 1 << 22           # ... and inflated by zlib a piece of at most this many bytes at a time: however
                                        # far it inflates (a gzip bomb), a .gz is never held whole (inputs/sources.py)
TEXT_BLOCK_BYTES = 1 << 22              # the line readers (and detection, DETECT_READ_BYTES) take their input a block
                                        # of whole lines of this many bytes at a time (inputs/formats/common.py)
PLAIN_VALUE_MEMO_MAX_CHARS = 16         # YAML plain scalars up to this long have their value remembered (the same
PLAIN_VALUE_MEMO_ENTRIES = 4096         # keys and short values recur) ... for at most this many texts (inputs/yaml_events.py)
YAML_LIBYAML = True                     # YAML's events come from libyaml's parser when PyYAML has it, else (or False)
                                        # from PyYAML's pure reader: the same events, 3-4x slower (inputs/yaml_events.py)

# ---------------------------------------------------------------- writing files
PARALLEL_WRITE_MIN_ROWS = 1_000_000     # runs with this many lines are formatted in two halves on two threads
RANK_TEXT_TABLE_MAX = 100_000           # ranks up to this are written by lookup in a table of their texts, else formatted

# ---------------------------------------------------------------- the Dask engine (engines/dask_partition.py)
DASK_PARTITION_MIN_BYTES = 1 << 28      # a TREC run file this large is partitioned by query across the workers
                                        # (256 MiB, ~5M lines); smaller runs are one task each
DASK_BLOCK_BYTES = 1 << 26              # each worker reads and parses a partitioned run a byte range of this size at a time

# ---------------------------------------------------------------- ids (model.py, fast/strings.py)
FEW_RUNS_FRACTION = 8                   # a column is "few runs" (queries' lines together) with at most n / 8 runs ...
FEW_RUNS_MIN = 50_000                   # ... or at most this many: run heads become Python strings, else Arrow's
                                        # dictionary encoding (the scattered-qid path)
RADIX_MAX_CODES = 1 << 16               # group codes below this fit 16 bits: numpy's radix sort, else a comparison sort
STRING_SLICE_ROWS = 1 << 20             # string columns are hashed, and compared row with row, in slices of this many
                                        # rows, side by side (one per core)
ID_RENUMBER_SLICE_ROWS = 1 << 20        # scattered ids are renumbered by first appearance this many rows at a time
CONSTANT_COLUMN_BLOCK_ROWS = 1 << 20    # a column of one repeated value is chunks of this many rows sharing one buffer

# ---------------------------------------------------------------- per-query matrices (model.query_matrix_pays)
QUERY_MATRIX_GROWTH = 2                 # a (queries x longest) matrix may hold this many cells per value ...
QUERY_MATRIX_SLACK = 1_000_000          # ... plus this many; beyond that (uneven depths) callers take another path
QUERY_MATRIX_MAX_QUERIES = 200_000      # and no more rows than this (a query's matrix row and its Python-side
                                        # bookkeeping cost something however short the query)
ROW_SORT_SLICE_CELLS = 1 << 20          # such a matrix is laid out, sorted or compared with, a slice of queries of
                                        # about this many cells at a time, side by side (one per core;
                                        # model.query_slices)

# ---------------------------------------------------------------- ranking judged docs (ranking/judged.py)
RANK_SORT_GROWTH = 8                    # comparing judged rows with their query's rows costs more than this many
RANK_SORT_SLACK = 1_000_000             # cells per run line (plus this): sort the whole run instead
RANK_BLOCK_CELLS = 1_000_000            # judged rows are compared a block of about this many cells at a time
QUERY_ROWS_BLOCK_CELLS = 1 << 18        # the same for the per-query matrix path (256K cells: a block stays in cache)
TIE_TEXT_SLICE_ROWS = 1 << 20           # rows of score ties are settled by doc text this many at a time (whole tie
                                        # groups), side by side (ranking/order.py)

# ---------------------------------------------------------------- work done in pieces (the same result, bounded memory)
PERCENT_SCAN_SLICE_BYTES = 1 << 20      # ids are searched for '%' a slice of this many bytes at a time (ids.py: a
                                        # copy of the whole buffer would cost more than the search)
DIVERSITY_BLOCK_CELLS = 1 << 22         # documents x subtopics x topics computed at once, at most (unless one topic is
                                        # larger; measures/subtopics.py)
TIE_LATTICE_CHUNK_STATES = 2_000_000    # tie-aware infAP / G: a group's composition lattice is worked on this many
                                        # states at a time (measures/ties/lattice.py)
DENSE_DOC_CHUNK_ROWS = 65_536           # documents scored at once by the dense baseline: bounds the (queries x chunk)
                                        # score block (retrieval/dense.py)
RESAMPLE_DRAW_BLOCK = 1000              # random draws made per block by the resampling tests (compare/stats.py) ...
RESAMPLE_DRAW_CELLS = 1 << 24           # ... and at most this many random numbers per block (many queries: fewer draws)
RESAMPLE_COUNT_CELLS = 1 << 18          # the bootstrap counts how often each query is drawn this many cells at a time
                                        # (a few draws together: one count of them, cache-sized)
WHOLE_READ_BLOCK_BYTES = 1 << 24        # what is read into memory whole is read a block of this many bytes at a time
                                        # (one read of the whole limit would reserve it; inputs/limits.py)
TESTSET_BLOCK_QUERIES = 1 << 16         # a test set's queries gathered as Python objects before they join its Arrow
                                        # columns (testsets/load.py)
DASK_TAIL_READ_BYTES = 1 << 16          # a partitioned block's last line is read on past the block's end this many
                                        # bytes at a time (engines/dask_partition.py)
LINE_END_READ_BYTES = 1 << 16           # the same for the end of a block of whole lines of a plain file
                                        # (inputs/sources.Source.line_spans), and back from a file's end for its
                                        # last line (Source.last_line: the run's tag)
SERVICE_GIVE_BACK_MIN_BYTES = 1 << 20   # after a request body this large, a service worker hands what it freed back to
                                        # the system (service/workers.after_request)
SOURCE_END_BYTES = 1 << 16              # a file's first and last bytes held apart for detection (gzip's magic, the
                                        # format) and the run's tag (inputs/sources.Source.head / tail); at least 2
DIGEST_READ_BYTES = 1 << 20             # a file's content digest is computed a block of this many bytes at a time ...
DIGESTS_KEPT = 4096                     # ... and remembered for this many files at most, the oldest forgotten first
                                        # (inputs/sources.file_digest)
COPY_BLOCK_BYTES = 1 << 20              # an output that is a device or a pipe gets its staged content this many bytes
                                        # at a time (output/files.py)
TESTSET_GIVE_BACK_MIN_BYTES = 8 << 20   # after reading a test set larger than this, the memory freed is handed back to
                                        # the system (testsets/load.py; console/process.memory_freed)
LONG_LINE_LOOK_BACK_BYTES = 1 << 12     # a file checked for long lines at offsets is searched back from where a line
                                        # must end by for its last newline this many bytes at first ...
LONG_LINE_LOOK_BACK_MAX_BYTES = 1 << 20 # ... twice as many at each next step, up to this many; a long line's number is
                                        # counted this many bytes at a time (inputs/long_lines.py)
DETECT_READ_BYTES = 1 << 16             # format detection reads on for whole first lines at least this many bytes at a
                                        # time, else as many as it has read (inputs/formats/common.py)
PIPE_POLL_MS = 200                      # a pipe (stdin, a FIFO) is waited on at most this many milliseconds at a time,
                                        # so that Ctrl-C landing on another thread still gets through (inputs/limits.py)

# ---------------------------------------------------------------- finding repeated (query, doc) pairs (repeats.py)
REPEAT_BITMAP_MASK = (1 << 22) - 1      # mask of the bitmaps that nominate candidates: 4 MiB of bools

# ---------------------------------------------------------------- bounded-memory evaluation (engines/stream.py)
MEMORY_LIMIT_DEFAULT = 2 << 30          # --memory-limit's default budget (bytes)
IN_MEMORY_BYTES_PER_FILE_BYTE = 3       # evaluating a TREC run whole takes about this many bytes of memory per byte
                                        # of its file (measured: peak RSS / file size on the 7M- and 100M-line runs);
                                        # a run whose file size times this exceeds the budget is streamed
STREAM_BLOCK_SHARE = 16                 # a streamed run is read a block of (budget / this) bytes at a time (whole
                                        # lines; the carried-over last query comes on top; the next block is read
                                        # while one is evaluated)
STREAM_BLOCK_MIN_BYTES = 1 << 16        # ... but never smaller than this
TESTSET_RUN_MEMORY = MEMORY_LIMIT_DEFAULT // 2    # `testset eval --run` evaluates a TREC run within this budget
                                        # (streamed beyond it, as treckit eval streams); the other half is the test
                                        # set's and its per-query results' (a million queries: about 1 GiB)
SHARD_SHARE = 4                         # an interleaved run is cut into shards of about (budget / this) bytes of
                                        # memory each (estimated as above) ...
SHARDS_MAX = 4096                       # ... and into no more shards than this (one open file each while writing; fewer when
                                        # the open-file limit, ulimit -n, is lower: engines.stream.files_we_may_open)
GZIP_SHARD_EXPANSION = 8                # an interleaved .gz run's content is counted as this many times its compressed
                                        # size (a TREC run inflates about 3.5x: more shards, each smaller, rather than
                                        # fewer, larger ones; engines/stream.py)
MEMORY_LIMIT_MIN = 16 << 20             # the smallest budget: a smaller --memory-limit still cuts a streamed run into
                                        # smaller blocks, but what a budget bounds (what is held, the longest line and
                                        # query) is bounded as for this one (inputs/held.py; docs/engines.md)
HELD_PIECE_SHARE = 16                   # within a budget, a reader's pieces (a block of lines, an inflated piece, a part
                                        # parsed beside others) are at most (budget / this) bytes each ...
HELD_LINE_SHARE = 64                    # ... and no line may be longer than (budget / this) bytes (inputs/held.py)
LINE_READER_BYTES_PER_BYTE = 32         # the line-by-line readers (TREC lines Arrow cannot take, TSV, JSON lines, BEIR,
                                        # prefs, corpora) hold up to this many bytes per byte of content (measured: 25
                                        # for TREC lines, 17-21 for TSV); the Arrow readers IN_MEMORY_BYTES_PER_FILE_BYTE
RUN_RANKINGS_SHARE = 8                  # a system's run component is held as Python rankings beside the other stages'
                                        # (measured: about 24 bytes per byte of the file, 8x what the Arrow reader admits
                                        # it at): each is read within (budget / this / runs held) (retrieval/system.py)
INDEX_BYTES_PER_BYTE = 16               # a baseline's index over a corpus (bm25, bow) and the corpus held take up to this
                                        # many bytes per byte of the corpus (measured: 12 for bm25, 9 for bow); past
                                        # the budget, retrieve refuses before indexing (retrieval/corpus.py)
OUTPUT_CHUNK_QUERIES = 1000            # trec_eval text (-q) is written this many queries' lines at a time

# ---------------------------------------------------------------- preference measures (measures/prefs.py)
PAIR_BLOCK_CELLS = 1 << 20              # prefs_pair* over several judgment groups counts doc pairs with a retrieved doc
                                        # (and, past CLASS_LIMIT, unretrieved pairs) a block of this many (doc, doc)
                                        # cells at a time: memory bounded, time retrieved x judged x groups
CLASS_LIMIT = 2048                      # unretrieved docs with the same level in every (single sub-group) judgment
                                        # group form a class; with at most this many classes their pairs are counted
                                        # class by class, else in blocks of PAIR_BLOCK_CELLS

# ---------------------------------------------------------------- bounds on hostile input (past them, it is refused)
MAX_LINE_BYTES = 1 << 24                # no line of an input may be longer (16 MiB; checked while reading, so a
                                        # gzip bomb of one endless line is refused, never held whole): TREC and TSV
                                        # lines are under a KiB, QUEST's JSON lines about 10 KiB (one listing
                                        # thousands of docs a few hundred KiB), so a JSON line may carry long texts
                                        # and still fit many times over; while Python parses one line of ids it holds
                                        # about ten times its bytes, a bounded cost; under the detector's 64 MiB
                                        # (formats/common.py), so every first line the readers read is detected
WHOLE_READ_LIMIT: int | None = None     # at most this many bytes are read into memory whole (stdin, pipes, .gz content,
                                        # the line parsers' input); None: the machine's physical memory. Plain files
                                        # above it are still read by the streaming (Arrow) paths
UNKNOWN_MEMORY_BYTES = 64 << 30         # the physical memory assumed where the system does not say (inputs/limits.py)
CONFIG_READ_LIMIT = 1 << 20             # small side files (configs): at most 1 MiB (inputs/bounded.py)
DOCUMENT_READ_LIMIT = 256 << 20         # test sets and results files: at most 256 MiB of content (a million-query
                                        # test set is about 170 MB; inputs/bounded.py)
MEMORY_FACTOR = 6                       # reading a test set or a results file takes at most this many times its size
                                        # in memory beyond the interpreter: its bytes and text (2x) and what is built
                                        # (up to 4x); measured on generated files (tests/inputs/test_bounded.py)
MAX_DEPTH = 32                          # YAML and JSON documents: levels of nesting (a mapping or list in a mapping or
                                        # list ...; the top level is level 1); the first level too many stops the read
                                        # (inputs/bounded.py)
MAX_NUMBER_CHARS = 400                  # a longer number in YAML or JSON input is refused (a double has 17
                                        # significant digits; CPython's int parsing is quadratic and fails deep
                                        # inside the parser past 4,300 digits) (inputs/bounded.py)
JSON_DENSITY_EXEMPT_BYTES = 1 << 20     # a JSON document of more than this many bytes (characters) ...
JSON_BYTES_PER_CONTAINER = 16           # ... holds at most one list or object per this many: each costs Python
                                        # about 60 bytes, so a file of empty lists ([[],[],...], one per 3 bytes)
                                        # would need 45 times its size, and one within the bound at most about 12
                                        # (results files: 3); a denser one is refused (inputs/bounded.py)
MAX_CONFIG_TEXTS = 10_000               # texts of a free-form config looked at as possible file names whose content
                                        # keys the results cache (a config is small; testsets/cache.py) ...
CONFIG_FILE_NAME_MAX_CHARS = 4096       # ... and only texts up to this long: a longer one names no file (PATH_MAX)
MAX_LISTED_PROBLEMS = 100               # a document's (or a service request's) problems beyond these are counted, not
                                        # listed nor kept (inputs/bounded.Problems, service/evaluator.py)
MIN_DRAWS = 100                         # fewer random draws (--permutations, --resamples) than this cannot support a
                                        # p-value worth reporting ...
MAX_DRAWS = 1_000_000                   # ... and more bound time and memory and resolve no p-value anyone reports:
                                        # both are refused (compare/compare.py)
DETECT_MAX_BYTES = 64 << 20             # format detection reads whole first lines (a QUEST line lists thousands of
                                        # docs), but no more: a longer first line is refused (inputs/formats/common.py)
GRADE_COUNT_MAX_CELLS = 1 << 26         # docs-per-grade counts are kept per query x distinct grade (not per grade value
                                        # up to the largest, as trec_eval does): a grade of 10**12 costs one column;
                                        # qrels needing more cells are refused (ranking/judged.py)
GRADE_LIKE_HEAD = 4096                  # only a run whose first this-many scores look like grades is scanned whole for
                                        # the "scores look like grades" warning (ranking/judged.py)
TIE_LATTICE_MAX_STATES = 20_000_000     # tie-aware infAP / G: a tie group whose composition lattice has more states is
                                        # refused, its size named (measures/ties/lattice.py)
TIE_IPREC_MAX_CELLS = 500_000_000       # tie-aware interpolated precision: at most this many steps (values x places x
                                        # relevant docs) in one level (measures/ties/iprec.py)
DIVERSITY_MAX_RANKS = 1 << 18           # diversity cutoffs: past the ranks that change a value (the run's, the ideal's,
                                        # the normalising sums'), a cutoff costs nothing more; a cutoff beyond this
                                        # many ranks whose sums still change there (alpha near 0) is refused
                                        # (measures/subtopics.py)
PA_MAX_DOCS = 4096                      # docs of one judgment group with several sub-groups: its preferences are closed
                                        # transitively as a dense boolean matrix of this many squared cells (16 MB);
                                        # a larger group is refused with a message (trec_eval allocates
                                        # num_judged^2 cells per sub-group there)
