"""The YAML test-set schema: a named, versioned set of labelled queries.

    name: clinical_v1
    version: "1.2"
    description: optional text
    queries:
      - query_id: q1
        query_text: statin dosage after stroke
        query_type: complex_clinical        # a free label, used to break results down
        topK: 10                            # optional: the cutoff the RQ metric uses for this query
        relevant_docs:
          - {doc_id: PMC123, grade: 3}      # grades 0..3; at least one doc with grade > 0
          - {doc_id: PMC456, grade: 0}

The models are the single definition: loading validates against them, and the JSON Schema shipped
beside this file (``testset.schema.json``) is generated from them (a test keeps the two equal).
:class:`QuerySetModel` is the same schema with unlabelled queries allowed, as the RQ metric reads
a query set.
"""
from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ..measures.readable import MAX_CUTOFF

MAX_GRADE = 3


class RelevantDoc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: StrictStr = Field(min_length=1, description="the document's id, as in the corpus and the runs")
    grade: StrictInt = Field(ge=0, le=MAX_GRADE, description="0 = judged not relevant ... 3 = highly relevant")


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    query_id: StrictStr = Field(min_length=1)
    query_text: StrictStr = Field(min_length=1)
    query_type: StrictStr = Field(min_length=1, description="a free label such as exact_term, paraphrase")
    topK: Optional[StrictInt] = Field(default=None, ge=1, le=MAX_CUTOFF, description="this query's cutoff for the RQ metric")
    relevant_docs: list[RelevantDoc] = Field(min_length=1)


class TestSetModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, title="treckit test set")
    __test__ = False

    name: StrictStr = Field(min_length=1)
    version: StrictStr = Field(min_length=1, description="bumped whenever queries or labels change")
    description: Optional[StrictStr] = None
    queries: list[Query] = Field(min_length=1)


class QueryMaybeUnlabelled(Query):
    model_config = ConfigDict(extra="forbid", frozen=True)

    relevant_docs: list[RelevantDoc] = Field(default_factory=list,
                                             description="may be left out or empty: an unlabelled query")


class QuerySetModel(TestSetModel):
    """A test set as the RQ metric reads it (its document's query set): a query may be unlabelled, with
    no ``relevant_docs`` or none of grade > 0; every other rule of :class:`TestSetModel` holds."""

    queries: list[QueryMaybeUnlabelled] = Field(min_length=1)


def json_schema() -> dict:
    return TestSetModel.model_json_schema()
