"""Measures: declarative definitions (:mod:`.registry`), the ranked-and-judged view
(:mod:`.ranking`) and one module of vectorized kernels per family."""
