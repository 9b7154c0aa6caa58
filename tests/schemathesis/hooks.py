"""Schemathesis hooks for Photofinish's fuzz run (scripts/openapi-fuzz.sh).

Only a serializer: schemathesis has none for `application/x-ndjson`, the import's body,
so without this it cannot send one. No check is replaced or relaxed here: the run uses
stock schemathesis with every check; what a check may accept is configured, stock-wise,
in schemathesis.toml.
"""

import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    """An import body (JSON Lines): the generated value as one line. (A value that is no
    object, as a negative case makes, stays one line too, so the server sees it and
    refuses it; spreading a list over lines would turn `[]` into an empty body, which
    imports nothing, as documented.)"""
    return (json.dumps(value) + "\n").encode()
