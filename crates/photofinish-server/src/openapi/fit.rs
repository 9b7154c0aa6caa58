//! What the annotations cannot say, said exactly (docs/SPEC.md §8): the document generated
//! from the handlers is fitted, as JSON, to the checks the server makes — every path and
//! query parameter's pattern or range, every body field's type, enum and range, unknown
//! fields refused (`additionalProperties: false`, which the server enforces), required
//! bodies, the error answers every operation can give, and links from a write to the
//! member it wrote and from a board to its entries. A schema-driven fuzzer (schemathesis)
//! runs against the result in the test suite.
//!
//! Each pattern comes from the rule it describes (`config::BOARD_NAME_PATTERN`, …), so a
//! rule and its schema change together.

use photofinish_core::calendar::{INSTANT_YEAR_PATTERN, PERIOD_ID_PATTERN};
use photofinish_core::cohort::{MAX_COHORT_SIZE, MIN_COHORT_SIZE};
use photofinish_core::columns::{COLUMN_NAME_PATTERN, MAX_COLUMNS};
use photofinish_core::config::{
    BOARD_NAME_PATTERN, MAX_GRACE_S, MAX_MEMBER_NAME_BYTES, MAX_RETENTION_PERIODS, MAX_WEBHOOK_TOP,
    MAX_WEBHOOK_URL_BYTES, MEMBER_NAME_PATTERN, WEBHOOK_URL_PATTERN,
};
use photofinish_core::entry::MAX_ATTEMPTS;
use photofinish_core::error::ErrorCode;
use photofinish_core::groups::GROUP_KEY_PATTERN;
use photofinish_core::idempotency::IDEMPOTENCY_KEY_PATTERN;
use photofinish_core::query::{
    MAX_MEMBER_BOARDS, MAX_QUERY_MEMBERS, MAX_THRESHOLDS, PERCENT_PATTERN,
};
use photofinish_core::rewards::{
    MAX_REWARD_AMOUNT, MAX_REWARD_RANK, MAX_REWARD_ROWS, MAX_REWARD_TTL_S, REWARD_ID_PATTERN,
};
use serde_json::{json, Value};

use crate::limits::{MAX_AROUND_SIDE, MAX_BATCH_ENTRIES, MAX_BODY_BYTES, MAX_PAGE_LIMIT};

/// The decimal strings of the integers in `-neg..=pos` (no sign on zero needed, leading
/// zeros allowed, as the server parses them), as a regular expression.
pub fn integer_pattern(pos: u64, neg: u64) -> String {
    format!(
        "^(0*({})|-0*({}))$",
        at_most(&pos.to_string()),
        at_most(&neg.to_string())
    )
}

/// Alternatives matching the decimal numbers 0..=`bound` without leading zeros.
fn at_most(bound: &str) -> String {
    let digits: Vec<u32> = bound.bytes().map(|b| u32::from(b - b'0')).collect();
    let n = digits.len();
    let mut alts = vec!["0".to_owned()];
    // Shorter numbers: any 1..n-1 digits without a leading zero.
    if n > 1 {
        alts.push(format!("[1-9][0-9]{{0,{}}}", n - 2));
    }
    // n digits: equal to the bound up to position i, smaller at i, anything after.
    for i in 0..n {
        let lowest = if i == 0 { 1 } else { 0 };
        if digits[i] > lowest {
            let prefix: String = bound[..i].to_owned();
            let rest = n - i - 1;
            let class = format!("[{}-{}]", lowest, digits[i] - 1);
            alts.push(format!("{prefix}{class}[0-9]{{{rest}}}"));
        }
    }
    alts.push(bound.to_owned());
    alts.join("|")
}

/// The decimal strings of the i64 range, as [`integer_pattern`] writes them.
fn i64_pattern() -> String {
    integer_pattern(i64::MAX.unsigned_abs(), i64::MIN.unsigned_abs())
}

/// A score as a body takes it: a JSON integer in the i64 range or a decimal string of one.
fn score_schema() -> Value {
    let (min, max) = (i64::MIN, i64::MAX);
    json!({
        "description": "A JSON integer or a decimal string (for values past 2^53 from JavaScript) in the 64-bit integer range, on every backend",
        "oneOf": [
            {"type": "integer", "minimum": min, "maximum": max},
            {"type": "string", "pattern": i64_pattern()}
        ]
    })
}

fn member_schema() -> Value {
    json!({
        "type": "string",
        "pattern": MEMBER_NAME_PATTERN,
        "description": format!("1 to {MAX_MEMBER_NAME_BYTES} bytes of UTF-8 without control characters (the pattern counts characters; the server counts bytes)"),
    })
}

fn nullable(mut schema: Value) -> Value {
    if let Some(t) = schema
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned)
    {
        schema["type"] = json!([t, "null"]);
    }
    if let Some(e) = schema.get_mut("enum").and_then(Value::as_array_mut) {
        e.push(Value::Null);
    }
    if schema.get("oneOf").is_some() {
        return json!({"oneOf": [schema, {"type": "null"}]});
    }
    schema
}

fn time_zones() -> Vec<String> {
    jiff::tz::db()
        .available()
        .map(|n| n.as_str().to_owned())
        .collect()
}

/// The schema of each parameter, by name.
fn parameter_schema(name: &str) -> Option<Value> {
    Some(match name {
        "board" => json!({"type": "string", "pattern": BOARD_NAME_PATTERN}),
        "member" => member_schema(),
        "offset" => json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        "limit" => json!({"type": "integer", "minimum": 0, "maximum": MAX_PAGE_LIMIT}),
        "before" | "after" => json!({"type": "integer", "minimum": 0, "maximum": MAX_AROUND_SIDE}),
        "ranking" => json!({"type": "string", "enum": ["ordinal", "competition", "dense"]}),
        "period" => json!({"type": "string", "pattern": PERIOD_ID_PATTERN}),
        "partition" | "team" => json!({"type": "string", "pattern": GROUP_KEY_PATTERN}),
        "status" => json!({"type": "string", "enum": ["unclaimed", "claimed", "expired", "all"]}),
        // Any text: what names no grant is 404 reward_not_found, as an unknown one.
        "id" => json!({"type": "string", "minLength": 1, "maxLength": 200}),
        "since" => {
            json!({"type": "string", "format": "date-time", "pattern": INSTANT_YEAR_PATTERN})
        }
        "score" => json!({"type": "string", "pattern": i64_pattern()}),
        "scores" => {
            let value = i64_pattern();
            let value = value.trim_start_matches('^').trim_end_matches('$');
            json!({"type": "string", "pattern": list_pattern(value, MAX_COLUMNS)})
        }
        "ranks" => {
            // 1..=u64::MAX: the alternatives of 0..=u64::MAX without "0", leading zeros allowed.
            let all = at_most(&u64::MAX.to_string());
            let positive = all.strip_prefix("0|").unwrap_or(&all).to_owned();
            json!({"type": "string", "pattern": list_pattern(&format!("0*({positive})"), MAX_THRESHOLDS)})
        }
        "top_percent" => {
            json!({"type": "string", "pattern": list_pattern(PERCENT_PATTERN, MAX_THRESHOLDS)})
        }
        "boards" => {
            let board = BOARD_NAME_PATTERN
                .trim_start_matches('^')
                .trim_end_matches('$');
            json!({"type": "string", "pattern": list_pattern(board, MAX_MEMBER_BOARDS)})
        }
        "Idempotency-Key" => json!({"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN}),
        _ => return None,
    })
}

/// A comma-separated list of 1 to `max` items, each matching `item` (unanchored).
fn list_pattern(item: &str, max: usize) -> String {
    format!("^({item})(,({item})){{0,{}}}$", max - 1)
}

fn error_answer(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    })
}

/// Fits `doc` (see the module docs).
pub fn fit(doc: &mut Value) {
    fit_bodies(&mut doc["components"]["schemas"]);
    fit_errors(&mut doc["components"]["schemas"]);
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            fit_operation(path, method, op);
        }
    }
}

/// An error's `code` is one of the server's stable codes (docs/SPEC.md §3), listed, so a
/// client generated from the document knows every code it may meet.
fn fit_errors(schemas: &mut Value) {
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    schemas["ErrorDetail"]["properties"]["code"]["enum"] = json!(codes);
    schemas["ErrorDetail"]["properties"]["grant"] = json!({
        "$ref": "#/components/schemas/GrantView",
        "description": "On already_claimed: the grant, as it was claimed (docs/SPEC.md §16)"});
}

fn fit_bodies(schemas: &mut Value) {
    for name in [
        "WriteBody",
        "BatchBody",
        "BoardConfigBody",
        "BoardPatchBody",
        "MembersQueryBody",
    ] {
        schemas[name]["additionalProperties"] = json!(false);
    }
    fit_query_body(schemas);
    fit_write_bodies(schemas);
    fit_config_bodies(schemas);
    fit_transfer_lines(schemas);
}

/// A `members:query` body: the names (bounded), a rank style, a period.
fn fit_query_body(schemas: &mut Value) {
    let q = &mut schemas["MembersQueryBody"]["properties"];
    q["members"] = json!({"type": "array", "maxItems": MAX_QUERY_MEMBERS, "items": member_schema(),
        "description": "Up to 1000 member names; a name given twice counts once"});
    q["ranking"] =
        json!({"type": ["string", "null"], "enum": ["ordinal", "competition", "dense", null]});
    q["period"] = json!({"type": ["string", "null"], "pattern": PERIOD_ID_PATTERN});
    schemas["MembersQueryBody"]["required"] = json!(["members"]);
}

/// A write's body and a batch's: one of `score` and `scores`, a period or an instant.
fn fit_write_bodies(schemas: &mut Value) {
    let w = &mut schemas["WriteBody"]["properties"];
    w["member"] = member_schema();
    w["score"] = score_schema();
    w["op"] = json!({"type": ["string", "null"], "enum": ["incr", "best", "set", null],
        "description": "The operator; the board's default when absent or null"});
    w["metadata"] = json!({"type": ["object", "null"],
        "description": "A JSON object of at most 1 KiB serialized, stored with the entry; kept when absent or null"});
    w["at"] = json!({"type": ["string", "null"], "format": "date-time", "pattern": INSTANT_YEAR_PATTERN,
        "description": "RFC 3339 instant of the write, 1970 to 9999 (imports, replays); the server clock when absent"});
    w["period"] = json!({"type": ["string", "null"], "pattern": PERIOD_ID_PATTERN,
        "description": "The period the write lands in (`current`, `previous` or an id, as a read names them): the current one, or one that ended less than the board's grace ago (reached_at is still now). 422 period_closed after the grace, 422 invalid_period for a period not started or an id of this pattern that is not one of the board's periods, 400 invalid_period for one of no pattern. Not together with at"});
    // The annotation's description and example stay; the pattern is the rule's.
    for group in ["partition", "team"] {
        w[group]["type"] = json!(["string", "null"]);
        w[group]["pattern"] = json!(GROUP_KEY_PATTERN);
    }
    let named = named_scores_schema();
    // `null` counts as absent, as for every optional field.
    w["scores"] = nullable(named.clone());
    w["scores"]["description"] = json!("Scores by column name (docs/SPEC.md §13): the columns written, every one under best. Which names a board has is the board's (422 invalid_score for another, for score on a board of several columns, and for a best that leaves one out)");
    // A write names a period or an instant, not both (null counts as absent); and it
    // gives `score` or `scores`, exactly one.
    schemas["WriteBody"]["allOf"] = json!([
        {"not": {
            "required": ["period", "at"],
            "properties": {"period": {"type": "string"}, "at": {"type": "string"}}
        }},
        {"not": {"required": ["score", "scores"], "properties": {"scores": {"type": "object"}}}},
        {"anyOf": [{"required": ["score"]}, has_scores_schema()]}
    ]);
    schemas["BatchBody"]["properties"]["entries"] = json!({
        "type": "array", "maxItems": MAX_BATCH_ENTRIES,
        "items": {"$ref": "#/components/schemas/WriteBody"},
        "description": "Up to 1000 writes, applied in order. An entry that breaks the schema refuses the whole batch (nothing applied); an entry refused by a board's rules or state gets its error in its place"
    });
    schemas["BatchBody"]["required"] = json!(["entries"]);
    // Each result is the entry's write result, or its error in its place.
    schemas["BatchResult"]["properties"]["results"]["items"] = json!({"anyOf": [
        {"$ref": "#/components/schemas/WriteResult"},
        {"$ref": "#/components/schemas/ErrorBody"}
    ]});
}

/// A board's config as created and as patched, its columns, and a league's tiers.
fn fit_config_bodies(schemas: &mut Value) {
    let score = score_schema();
    schemas["LeagueView"]["properties"]["tiers"] = json!({"type": "array",
        "minItems": photofinish_core::league::MIN_TIERS, "maxItems": photofinish_core::league::MAX_TIERS,
        "uniqueItems": true, "items": {"type": "string", "pattern": "^[a-z0-9_-]{1,32}$"},
        "description": "Tier names, lowest first: new members start in the first"});
    fit_reward_row(schemas);
    let c = &mut schemas["BoardConfigBody"]["properties"];
    fit_rules(c);
    c["cohort_size"] = json!({"type": ["integer", "null"], "minimum": MIN_COHORT_SIZE,
        "maximum": MAX_COHORT_SIZE,
        "description": "Members per cohort (docs/SPEC.md §14): each period splits its members into cohorts of this size in arrival order, each ranked on its own; fixed for the board's life"});
    schemas["PartitionsView"]["properties"]["max"] = json!({"type": "integer",
        "minimum": 1, "maximum": photofinish_core::groups::MAX_PARTITIONS,
        "description": "The most partitions a period holds: a write that would open one more is 422 too_many_partitions"});
    schemas["TeamsView"]["properties"]["max_size"] = json!({"type": "integer",
        "minimum": 1, "maximum": photofinish_core::groups::MAX_TEAM_SIZE,
        "description": "The most members a team holds in a period: a write that would add one more is 422 team_full"});
    let c = &mut schemas["BoardConfigBody"]["properties"];
    c["columns"] = json!({"type": ["array", "null"], "minItems": 1, "maxItems": MAX_COLUMNS,
        "items": {"$ref": "#/components/schemas/ColumnBody"},
        "description": "The columns the board ranks by, in order (docs/SPEC.md §13), fixed for its life; names unique (422 invalid_config); on a board of 2 or more, min_score, max_score and max_increment are refused (422 invalid_config: each column has its own)"});
    c["order"] = json!({"type": ["string", "null"], "enum": ["desc", "asc", null]});
    c["update"] = json!({"type": ["string", "null"], "enum": ["incr", "best", "set", null]});
    c["reset"] =
        json!({"type": ["string", "null"], "enum": ["never", "daily", "weekly", "monthly", null]});
    c["week_start"] = json!({"type": ["string", "null"], "enum": ["monday", "sunday", null]});
    let mut zones: Vec<Value> = time_zones().into_iter().map(Value::String).collect();
    zones.push(Value::Null);
    c["timezone"] = json!({"type": ["string", "null"], "enum": zones,
        "description": "IANA time zone of the periods (the server's bundled database)"});
    // A webhook posts each period's results when it closes: the board must reset (the
    // default `never` has one period that never closes) and keep at least 2 periods. (On
    // PATCH this depends on the board's settings, which no schema of the body can see.)
    schemas["BoardConfigBody"]["if"] = json!({
        "required": ["webhook"], "properties": {"webhook": {"type": "string"}}
    });
    schemas["BoardConfigBody"]["then"] = json!({
        "required": ["reset"],
        "properties": {
            "reset": {"enum": ["daily", "weekly", "monthly"]},
            "retention": {"type": ["integer", "null"], "minimum": 2}
        }
    });
    let col = &mut schemas["ColumnBody"];
    col["additionalProperties"] = json!(false);
    col["required"] = json!(["name"]);
    let p = &mut col["properties"];
    p["name"] = json!({"type": "string", "pattern": COLUMN_NAME_PATTERN});
    p["order"] = json!({"type": ["string", "null"], "enum": ["desc", "asc", null]});
    p["update"] = json!({"type": ["string", "null"], "enum": ["incr", "set", "min", "max", null],
        "description": "How a write without op changes the column; not on a best board (422 invalid_config)"});
    p["min"] = nullable(score.clone());
    p["max"] = nullable(score.clone());
    p["max_increment"] = json!({"type": ["integer", "null"], "minimum": 0, "maximum": u64::MAX});
    fit_rules(&mut schemas["BoardPatchBody"]["properties"]);
}

/// The rules a board's create and patch share: retention, access, score bounds, limits,
/// the webhook and a tournament's window.
fn fit_rules(p: &mut Value) {
    let score = score_schema();
    let retention = json!({"type": "integer", "minimum": 1, "maximum": MAX_RETENTION_PERIODS});
    p["retention"] = nullable(retention.clone());
    p["public_read"] = json!({"type": ["boolean", "null"]});
    p["player_writes"] = json!({"type": ["boolean", "null"]});
    p["min_score"] = nullable(score.clone());
    p["max_score"] = nullable(score.clone());
    p["max_increment"] = json!({"type": ["integer", "null"], "minimum": 0, "maximum": u64::MAX});
    p["max_members"] = json!({"type": ["integer", "null"], "minimum": 1, "maximum": u64::MAX});
    p["grace"] = json!({"type": ["integer", "null"], "minimum": 0, "maximum": MAX_GRACE_S});
    p["webhook"] = json!({"type": ["string", "null"], "pattern": WEBHOOK_URL_PATTERN,
        "maxLength": MAX_WEBHOOK_URL_BYTES,
        "description": "An http:// or https:// URL of printable ASCII (punycode for other host names), set by admins only"});
    p["webhook_top"] =
        json!({"type": ["integer", "null"], "minimum": 1, "maximum": MAX_WEBHOOK_TOP});
    for (field, what) in [
        ("opens_at", "A tournament's opening instant (docs/SPEC.md §14): a write or join before it gets 422 board_closed. Before closes_at (422 invalid_config)"),
        ("closes_at", "Its closing instant: a write or join at or after it gets 422 board_closed"),
    ] {
        p[field] = json!({"type": ["string", "null"], "format": "date-time",
            "pattern": INSTANT_YEAR_PATTERN, "description": what});
    }
    p["max_attempts"] = json!({"type": ["integer", "null"], "minimum": 1, "maximum": MAX_ATTEMPTS});
    p["join_required"] = json!({"type": ["boolean", "null"]});
    p["rewards"] = json!({"type": ["array", "null"], "maxItems": MAX_REWARD_ROWS,
        "items": {"$ref": "#/components/schemas/RewardRowView"},
        "description": "What each period's close pays (docs/SPEC.md §16), replaced whole; a member gets the first row it matches. Each row names from and to, or top_percent (422 invalid_config otherwise, or for from after to, a tier off a league board or not in its league, a share with more than two decimals)"});
    p["reward_ttl"] = json!({"type": ["integer", "null"], "minimum": 1, "maximum": MAX_REWARD_TTL_S,
        "description": "How long a grant may be claimed, seconds (default 30 days)"});
}

/// A reward row as a body gives it.
fn fit_reward_row(schemas: &mut Value) {
    let row = &mut schemas["RewardRowView"];
    row["additionalProperties"] = json!(false);
    row["required"] = json!(["reward"]);
    let p = &mut row["properties"];
    for (rank, what) in [
        ("from", "The first ordinal rank the row pays (with to)"),
        ("to", "The last ordinal rank the row pays (with from)"),
    ] {
        p[rank] = json!({"type": ["integer", "null"], "minimum": 1, "maximum": MAX_REWARD_RANK,
            "description": what});
    }
    p["top_percent"] = json!({"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 100,
        "description": "The top share of the visible entries, at most two decimals: the first ⌈P·n/100⌉"});
    p["reward"] = json!({"type": "string", "pattern": REWARD_ID_PATTERN,
        "description": "The reward's id"});
    p["amount"] = json!({"type": ["integer", "null"], "minimum": 1, "maximum": MAX_REWARD_AMOUNT,
        "description": "How many of it (default 1)"});
    p["tier"] = json!({"type": ["string", "null"], "pattern": "^[a-z0-9_-]{1,32}$",
        "description": "On a league board: the one tier the row pays in"});
}

/// An export's line and an import's.
fn fit_transfer_lines(schemas: &mut Value) {
    let t = &mut schemas["TransferLine"]["properties"];
    t["member"] = member_schema();
    t["score"] = score_schema();
    t["reached_at"] = json!({"type": "string", "format": "date-time", "pattern": INSTANT_YEAR_PATTERN,
        "description": "When the member first reached the score (RFC 3339, µs, 1970 to 9999). On import, optional: the import's own time when absent"});
    t["metadata"] = json!({"type": ["object", "null"],
        "description": "A JSON object of at most 1 KiB serialized, or null"});
    for group in ["partition", "team"] {
        t[group]["pattern"] = json!(GROUP_KEY_PATTERN);
    }
    // An import's line: an export's, with `reached_at` optional (absent or null: the
    // import's time) and unknown fields refused.
    let mut import = schemas["TransferLine"].clone();
    import["properties"]["scores"] = nullable(named_scores_schema());
    import["properties"]["scores"]["description"] = json!("Every column's value by name, on a board of several columns (with score, if given, the first column's)");
    import["required"] = json!(["member"]);
    import["anyOf"] = json!([{"required": ["score"]}, has_scores_schema()]);
    import["additionalProperties"] = json!(false);
    import["properties"]["reached_at"]["type"] = json!(["string", "null"]);
    import["description"] =
        json!("One line of an import: an export's line; `reached_at` and `metadata` optional");
    schemas["ImportLine"] = import;
}

/// Scores by column name: 1 to [`MAX_COLUMNS`] of them.
fn named_scores_schema() -> Value {
    json!({"type": "object", "minProperties": 1, "maxProperties": MAX_COLUMNS,
        "propertyNames": {"pattern": COLUMN_NAME_PATTERN},
        "additionalProperties": score_schema()})
}

/// An object that gives `scores` (an object, not null).
fn has_scores_schema() -> Value {
    json!({"required": ["scores"], "properties": {"scores": {"type": "object"}}})
}

/// `/readyz`'s 503: not ready is an answer of its own, with its reasons, not an error.
fn fit_readyz(op: &mut Value) {
    op["responses"]["503"] = json!({
        "description": "The node cannot serve now (loading, stopping, Redis unreachable, a \
                        skewed clock, a board in a newer format): `reasons` says why",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Ready"}}}
    });
}

/// The OpenAPI links of an operation's answer: what a client may call next with it.
fn links_of(method: &str, path: &str) -> Option<(&'static str, Value)> {
    match (method, path) {
        ("post", "/v1/boards/{board}/scores") => Some((
            "200",
            json!({
                "member": {"operationId": "get_member", "description": "The member just written",
                    "parameters": {"board": "$request.path.board", "member": "$response.body#/member"}}
            }),
        )),
        ("put", "/v1/boards/{board}") => Some((
            "201",
            json!({
                "entries": {"operationId": "get_entries", "description": "The board's top entries",
                    "parameters": {"board": "$response.body#/name"}},
                "scores": {"operationId": "post_score", "description": "Write a score on the board",
                    "parameters": {"board": "$response.body#/name"}}
            }),
        )),
        _ => None,
    }
}

fn fit_operation(path: &str, method: &str, op: &mut Value) {
    if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
        for p in params {
            let name = p["name"].as_str().unwrap_or_default().to_owned();
            if let Some(schema) = parameter_schema(&name) {
                p["schema"] = schema;
            }
        }
    }
    let has_json_body = op.get("requestBody").is_some() && !path.ends_with("/import");
    if let Some(body) = op.get_mut("requestBody") {
        // An import's body is JSON Lines: no lines is an import of nothing (an empty
        // export round-trips); every other body is required.
        body["required"] = json!(!path.ends_with("/import"));
        if path.ends_with("/import") {
            body["content"]["application/x-ndjson"]["schema"] =
                json!({"$ref": "#/components/schemas/ImportLine"});
        }
    }
    if path == "/readyz" {
        fit_readyz(op);
    }
    if !path.starts_with("/v1/") {
        return;
    }
    let responses = &mut op["responses"];
    let mut add = |code: &str, description: &str| {
        if responses.get(code).is_none() {
            responses[code] = error_answer(description);
        }
    };
    add("400", "A parameter or body this document rules out (a type, pattern, bound, required or unknown field: invalid_board_name, invalid_parameter, invalid_period, malformed_json, …); nothing changed. A request the document allows but a rule refuses is 422");
    if has_json_body {
        let over = format!(
            "The body is over the {MAX_BODY_BYTES}-byte limit (body_too_large); nothing changed"
        );
        add("413", &over);
    }
    if path.contains("{board}") {
        add(
            "404",
            "Unknown board (board_not_found), or member or period where the path names one",
        );
    }
    add(
        "503",
        "Storage unavailable (storage_unavailable), overloaded or shutting down; nothing changed",
    );
    let links = links_of(method, path);
    if let Some((status, links)) = links {
        responses[status]["links"] = links;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_lists_exactly_the_numbers_up_to_the_bound() {
        // Brute force over small bounds with a tiny matcher for these alternations.
        for bound in [0u64, 7, 9, 10, 19, 20, 99, 100, 305, 1000] {
            let alts: Vec<String> = at_most(&bound.to_string())
                .split('|')
                .map(str::to_owned)
                .collect();
            for n in 0..=1100u64 {
                let s = n.to_string();
                let hit = alts.iter().any(|a| alt_matches(a, &s));
                assert_eq!(hit, n <= bound, "bound {bound}, {n}: {alts:?}");
            }
        }
    }

    /// Matches `s` against one alternative made of literal digits, `[a-b]` classes and
    /// `[0-9]{k}` / `[0-9]{0,k}` repeats (all `at_most` writes).
    fn alt_matches(alt: &str, s: &str) -> bool {
        let mut rest = s.as_bytes();
        let mut a = alt.as_bytes();
        while !a.is_empty() {
            if a[0] == b'[' {
                let (lo, hi) = (a[1], a[3]);
                a = &a[5..];
                let (min, max) = if a.first() == Some(&b'{') {
                    let end = a.iter().position(|&c| c == b'}').expect("}");
                    let spec = std::str::from_utf8(&a[1..end]).expect("utf8");
                    a = &a[end + 1..];
                    match spec.split_once(',') {
                        Some((x, y)) => (x.parse().expect("n"), y.parse().expect("n")),
                        None => {
                            let k: usize = spec.parse().expect("n");
                            (k, k)
                        }
                    }
                } else {
                    (1, 1)
                };
                let mut taken = 0;
                while taken < max && rest.first().is_some_and(|c| (lo..=hi).contains(c)) {
                    rest = &rest[1..];
                    taken += 1;
                }
                if taken < min {
                    return false;
                }
            } else {
                if rest.first() != Some(&a[0]) {
                    return false;
                }
                rest = &rest[1..];
                a = &a[1..];
            }
        }
        rest.is_empty()
    }

    #[test]
    fn the_i64_pattern_names_its_bounds() {
        let p = integer_pattern(i64::MAX as u64, i64::MIN.unsigned_abs());
        assert!(
            p.contains("9223372036854775807") && p.contains("9223372036854775808"),
            "{p}"
        );
    }
}
