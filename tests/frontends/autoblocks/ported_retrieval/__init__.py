"""A retrieval test suite in the shape of seed 001's example suites (the Autoblocks examples'
retrieval suite), with its own content: a bike-shop help desk whose articles live in memory
and are found by keyword overlap instead of a vector index. Its imports point at `accord`;
everything else is as a user of seed 001 writes a suite.

Modules: `search` (the articles and the retriever, the task under test), `cases` (the test
case class and its cases), `evaluators`, `suite` (`run_test()`, the suite's entry point).
"""
