"""Schemathesis hooks for Photofinish's fuzz run (scripts/openapi-fuzz.sh).

One check replaces schemathesis' `positive_data_acceptance`: a request the document calls
valid must not be refused as malformed — except by the rules the document states in words
because a JSON Schema cannot say them. Those refusals depend on the server's state or on
more than one field, and each is named here with the reason:

- 422 idempotency_key_reused: the key was used before with another request (state).
- 422 period_not_retained: an `at` older than the board's retention window (state, clock).
- 422 score_overflow, score_rejected, board_full, ranking_full: the board's current
  scores, rules and size (state).
- 422 metadata_too_large: metadata over 1 KiB serialized (a size in bytes).
- 422 invalid_member: a member name over 128 bytes of UTF-8 (the schema counts characters).
- 422 invalid_time: an `at` before 1970 or past 9999 (`format: date-time` has no range).
- 400 invalid_config: `min_score` above `max_score`; a `webhook` on a board that never
  resets or keeps fewer than 2 periods (two fields, or a field and the board's state).
- 422 too_many_boards, 507 insufficient_storage: server limits (state).
- 422 period_closed, 422 invalid_period on a write naming `period`: a period closed past
  the board's grace, or not started (the clock); 400 invalid_period there: whether an id
  is one of the board's periods depends on its reset (state).
- 422 invalid_entries on an import naming an entry ("entry N (member …): …"): the same
  per-entry rules as a write's (the board's score rules, bytes of a name or metadata, the
  range of a time); a malformed line ("line N: …") is not excused.
- 400 invalid_parameter on a write with both `period` and `at` (two fields), and on
  `thresholds` with neither `ranks` nor `top_percent` (two parameters).

Everything else a valid request may get: 2xx, 3xx, 401, 403, 404, 409, 429, 5xx, as
schemathesis' own check allows.
"""

import json

import schemathesis

RULES = {
    422: {
        "idempotency_key_reused",
        "period_not_retained",
        "score_overflow",
        "score_rejected",
        "board_full",
        "ranking_full",
        "metadata_too_large",
        "invalid_member",
        "invalid_time",
        "too_many_boards",
    },
    400: {"invalid_config"},
    507: {"insufficient_storage"},
}


def _code(response):
    try:
        return json.loads(response.content)["error"]["code"]
    except Exception:  # noqa: BLE001 - not an error body
        return None


def _writes(case):
    """The write bodies of a request: a write, or a batch's entries."""
    body = case.body if isinstance(case.body, dict) else {}
    if case.path.endswith("/scores"):
        return [body]
    if case.path.endswith("/scores:batch"):
        return [e for e in body.get("entries") or [] if isinstance(e, dict)]
    return []


def _two_field_rule(case, status, code):
    """The refusals that depend on two fields, or on a write's named period (see above)."""
    writes = _writes(case)
    named = [w for w in writes if w.get("period") is not None]
    if code in ("period_closed", "invalid_period") and status in (400, 422) and named:
        return True
    if status == 400 and code == "invalid_parameter":
        if any(w.get("period") is not None and w.get("at") is not None for w in writes):
            return True
        query = case.query or {}
        if case.path.endswith("/thresholds") and not query.get("ranks") and not query.get("top_percent"):
            return True
    return False


def _allowed(status):
    return 200 <= status < 400 or status in (401, 403, 404, 409, 429) or status >= 500


@schemathesis.check
def valid_requests_refused_only_by_stated_rules(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    status = response.status_code
    if _allowed(status):
        return None
    code = _code(response)
    if _two_field_rule(case, status, code):
        return None
    if status == 422 and code == "invalid_entries" and case.path.endswith("/import"):
        if json.loads(response.content)["error"]["message"].startswith("invalid entries: entry "):
            return None
    if code in RULES.get(status, set()):
        if code == "invalid_member":
            # Only a name the schema's character count let through but the byte count refuses.
            name = (case.body or {}).get("member") if isinstance(case.body, dict) else None
            names = [name] if name else []
            if isinstance(case.body, dict):
                names += [e.get("member") for e in case.body.get("entries") or [] if isinstance(e, dict)]
                names += [m for m in case.body.get("members") or [] if isinstance(m, str)]
            names += [v for v in (case.path_parameters or {}).values()]
            if any(isinstance(n, str) and len(n.encode()) > 128 for n in names):
                return None
        else:
            return None
    raise AssertionError(
        f"valid data refused with {status} {code}: not a rule the document states"
    )


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    """An import body (JSON Lines): one generated object per line, or each of a list's items."""
    items = value if isinstance(value, list) else [value]
    return "".join(json.dumps(item) + "\n" for item in items).encode()
