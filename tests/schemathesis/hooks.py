"""Schemathesis hooks for Photofinish's fuzz run (scripts/openapi-fuzz.sh).

One check replaces schemathesis' `positive_data_acceptance`: a request the document calls
valid must not be refused as malformed — except by the rules below, which no schema can
state. Each depends on the server's state or clock, or compares what JSON Schema cannot,
and each is named here with the reason. (Everything a schema can say, the document says:
a write's `period` and `at` are exclusive (`not`), a board config's `webhook` needs a
reset and a retention of 2 (`if`/`then`), an instant's year is 1970..9998 (`pattern`).)

- 422 idempotency_key_reused: the key was used before with another request (state).
- 422 period_not_retained: an `at` older than the board's retention window (state, clock).
- 422 score_overflow, score_rejected, board_full, ranking_full: the board's current
  scores, rules and size (state).
- 422 board_closed, attempts_exhausted, not_joined: a tournament's window against the
  clock, a member's accepted writes this period, whether it joined (state, clock).
- 422 metadata_too_large: metadata over 1 KiB serialized (a size in bytes of a whole
  object's JSON text).
- 422 invalid_member: a member name over 128 bytes of UTF-8 (the schema counts characters).
- 422 invalid_time: an `at` whose year the pattern lets through but whose offset moves it
  out of range (1970-01-01 east of UTC, 9998-12-31 west of it): only the instant says.
- 400 invalid_config: `min_score` above `max_score`, or a column's `min` above its `max`
  (JSON Schema cannot compare two values); two columns of one name (`uniqueItems`
  compares whole items, not one field of them); a column's `update` on a `best` board,
  or `min_score`/`max_score`/`max_increment` beside two or more columns (rules between
  fields the schema states in their descriptions); on PATCH, a `webhook` for a board that
  never resets or keeps fewer than 2 periods (the board's settings, not the body's);
  `opens_at` not before `closes_at` (two values again), or either at the edge of the
  range where an offset moves it out (as `at` below).
- 400 invalid_score on a write: `scores` naming a column the board does not have, `score`
  on a board of several columns, a `best` that leaves a column out (the board's columns
  and update rule: state); on `rank`, the same, and `score` with `scores` (OpenAPI
  parameters cannot exclude each other).
- 400 invalid_parameter on `rank` with neither `score` nor `scores` (OpenAPI cannot
  require one of two query parameters); on a cohort read of a board without
  `cohort_size`, or naming a `tier` on a board without a league or one its league does
  not have, and a league read (`…/tier`, `…/moves`) of a board without a league (the
  board's config).
- 400 invalid_config on a league the board cannot have: without `cohort_size` or a
  reset, `promote + demote` above `cohort_size` (the board's other fields), a tier named
  twice (`uniqueItems` is not checked by every generator).
- 422 too_many_boards, 507 insufficient_storage: server limits (state).
- 422 period_closed, 422 invalid_period on a write naming `period`: a period closed past
  the board's grace, or not started (the clock); 400 invalid_period there: whether an id
  is one of the board's periods depends on its reset (state).
- 400 invalid_parameter on the audit log's `since` at the edge of the range where an
  offset moves it out (as `at` above).
- 422 invalid_entries on an import naming an entry ("entry N (member …): …"): the same
  per-entry rules as a write's (the board's score rules, bytes of a name or metadata, the
  range of a time); a malformed line ("line N: …") is not excused.

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
        "too_many_boards",
        "board_closed",
        "attempts_exhausted",
        "not_joined",
    },
    507: {"insufficient_storage"},
}


def _code(response):
    try:
        return json.loads(response.content)["error"]["code"]
    except Exception:  # noqa: BLE001 - not an error body
        return None


def _message(response):
    try:
        return json.loads(response.content)["error"]["message"]
    except Exception:  # noqa: BLE001 - not an error body
        return ""


def _writes(case):
    """The write bodies of a request: a write, or a batch's entries."""
    body = case.body if isinstance(case.body, dict) else {}
    if case.path.endswith("/scores"):
        return [body]
    if case.path.endswith("/scores:batch"):
        return [e for e in body.get("entries") or [] if isinstance(e, dict)]
    return []


def _state_rule(case, status, code, message):
    """The refusals that depend on a write's named period, a board's settings, or an
    instant's offset at the edge of the range (see above)."""
    named = [w for w in _writes(case) if w.get("period") is not None]
    if code in ("period_closed", "invalid_period") and status in (400, 422) and named:
        return True
    if status == 400 and code == "invalid_config":
        return (
            case.method.upper() == "PATCH"
            or "min_score" in message
            or "column" in message
            or "opens_at" in message
            or "closes_at" in message
            or "league" in message
            or "promote" in message
            or "tier" in message
        )
    if status == 400 and code == "invalid_score":
        return bool(_writes(case)) or case.path.endswith("/rank")
    if status == 400 and code == "invalid_parameter" and case.path.endswith("/rank"):
        query = case.query or {}
        return "score" not in query and "scores" not in query
    league_read = case.path.endswith("/tier") or case.path.endswith("/moves")
    if status == 400 and code == "invalid_parameter" and ("cohort" in case.path or league_read):
        return "no cohorts" in message or "no league" in message or "league's tiers" in message
    edges = ("1970-01-01", "9998-12-31")
    if status == 422 and code == "invalid_time":
        return any(str(w.get("at") or "").startswith(edges) for w in _writes(case))
    if status == 400 and code == "invalid_parameter" and case.path == "/v1/audit":
        return str((case.query or {}).get("since") or "").startswith(edges)
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
    if _state_rule(case, status, code, _message(response)):
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
    """An import body (JSON Lines): the generated value as one line. (A value that is no
    object, as a negative case makes, stays one line too, so the server sees it and
    refuses it; spreading a list over lines would turn `[]` into an empty body, which
    imports nothing, as documented.)"""
    return (json.dumps(value) + "\n").encode()
