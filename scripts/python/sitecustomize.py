"""Loaded by Python at start when this folder is on PYTHONPATH (scripts/fuzz-api.sh).

CPython 3.11 (Debian 12's, and the 3.11 builds these machines carry) can fail
`ast.parse` with "SystemError: AST constructor recursion depth mismatch"
(python/cpython#106905, fixed in 3.12); once it has, later parses in the
process fail the same way. Hypothesis parses the source of its lambdas only
to describe them in its reports, and gives up on a description when the
source does not parse (SyntaxError). Schemathesis, built on it, then stops
with "Runtime Error" on 3.11 now and then: a fault of the tool, not of the
API under test. Here that SystemError is raised as the SyntaxError Hypothesis
already handles, so a lambda goes undescribed instead.
"""

import ast
import sys

if sys.version_info < (3, 12):
    _parse = ast.parse

    def _parse_or_syntax_error(*args, **kwargs):
        try:
            return _parse(*args, **kwargs)
        except SystemError as error:
            raise SyntaxError(f"not parsed (CPython 3.11: {error})") from error

    ast.parse = _parse_or_syntax_error
