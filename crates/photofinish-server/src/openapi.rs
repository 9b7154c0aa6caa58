//! The OpenAPI 3 document, generated from the handlers' annotations and the DTOs, then
//! fitted to how the running server is configured ([`document`]): the bearer scheme, and
//! per operation whether a credential is required (a server with credentials), optional
//! (an open server; reads, which `public_read` boards serve to anyone) or not asked for
//! (`/healthz`, `/openapi.json`), with the 401 and 403 answers that follow.

mod fit;

use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::OpenApi;

use photofinish_core::ErrorCode;

use crate::error::{error_response, ErrorBody, ErrorDetail};
use crate::wire::types::*;

/// The API description served at `/openapi.json`: its info and schemas; each operation
/// comes from its handler, as [`crate::api`] registers it.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Photofinish",
        description = "Leaderboards ranked by score, ties broken by who reached the score first. \
            Every error is {\"error\":{\"code\",\"message\"}} with a stable code. \
            400 is only for what this document rules out (a type, a pattern, a bound, a required \
            or unknown field); a request it allows that a rule refuses (a rule between fields, one \
            of two parameters required, the board's config or state) is 422, or 409 where it \
            conflicts with stored state, under the same code. \
            Limits: body 2 MiB, batch 1000 entries, page 1000 rows, around 500 rows a side, \
            metadata 1 KiB, member 128 bytes, board name 64 bytes. Periods: `current` always \
            resolves (empty before its first write); any other period without data is 404 \
            period_not_found. Retention counts back from the current period (retention 8 on a daily \
            board: today and the 7 days before); older periods read as 404 period_not_found and \
            writes into them are 422 period_not_retained. \
            Storage: every backend holds scores over the whole i64 range, exactly (beyond it: 422 \
            score_out_of_range, or score_overflow for an incr); on the Redis backend \
            (--storage redis://...) Redis being unreachable is 503 storage_unavailable."
    ),
    components(schemas(
        BoardConfigBody,
        BoardPatchBody,
        BoardView,
        BoardList,
        WriteBody,
        WriteResult,
        BatchBody,
        BatchResult,
        MemberView,
        EntryView,
        EntriesPage,
        PeriodView,
        PeriodList,
        MembersQueryBody,
        MembersQueryView,
        ScoreRankView,
        ThresholdView,
        ThresholdsView,
        MemberBoardsView,
        crate::webhook::PeriodClosed,
        crate::webhook::CohortClosed,
        crate::routes::transfer::TransferLine,
        crate::wire::types::ImportAnswer,
        Health,
        Ready,
        ErrorBody,
        ErrorDetail,
    ))
)]
pub struct ApiDoc;

/// Paths that never ask for a credential.
const ALWAYS_OPEN: [&str; 3] = ["/healthz", "/readyz", "/openapi.json"];

fn secure(op: &mut Operation, security: Vec<SecurityRequirement>, refusals: bool) {
    op.security = Some(security);
    if refusals {
        let r = &mut op.responses.responses;
        let unauthorized = r
            .entry("401".into())
            .or_insert_with(|| error_response("No valid credential (unauthorized)").into());
        // Every 401 carries the scheme to authenticate with (error.rs sends it).
        if let utoipa::openapi::RefOr::T(resp) = unauthorized {
            resp.headers.insert(
                "WWW-Authenticate".into(),
                utoipa::openapi::HeaderBuilder::new()
                    .schema(
                        utoipa::openapi::ObjectBuilder::new()
                            .schema_type(utoipa::openapi::Type::String)
                            .enum_values(Some([crate::error::WWW_AUTHENTICATE])),
                    )
                    .description(Some("The scheme to authenticate with: Bearer"))
                    .build(),
            );
        }
        r.entry("403".into()).or_insert_with(|| {
            error_response("The credential does not allow this (forbidden)").into()
        });
        r.entry("429".into()).or_insert_with(|| {
            let mut resp = error_response(
                "Over the caller's rate limit (rate_limited); nothing changed. Retry after the Retry-After seconds",
            );
            resp.headers.insert(
                "Retry-After".into(),
                utoipa::openapi::HeaderBuilder::new()
                    .schema(utoipa::openapi::ObjectBuilder::new().schema_type(utoipa::openapi::Type::Integer))
                    .description(Some("Whole seconds, at least 1"))
                    .build(),
            );
            resp.into()
        });
    }
}

/// The operations that take an `Idempotency-Key` (docs/SPEC.md §7), and whether each may
/// add members (then it can meet the memory budget).
const KEYED_OPERATIONS: [(&str, &str, bool); 5] = [
    ("put", "/v1/boards/{board}", false),
    ("post", "/v1/boards/{board}/scores", true),
    ("post", "/v1/boards/{board}/scores:batch", true),
    ("delete", "/v1/boards/{board}/members/{member}", false),
    ("delete", "/v1/members/{member}", false),
];

/// Adds the `Idempotency-Key` header, the replay's `Idempotent-Replayed` header and the
/// key's refusals to a keyed operation; and 507 to one that may add members.
fn keyed(op: &mut Operation, adds_members: bool) {
    let param = utoipa::openapi::path::ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(utoipa::openapi::path::ParameterIn::Header)
        .required(utoipa::openapi::Required::False)
        .description(Some(
            "1 to 255 printable ASCII characters (else 400 invalid_idempotency_key). A repeat of the same request by the same credential on the same board within the key's lifetime (24 h by default) answers the first answer again with Idempotent-Replayed: true and applies nothing; the same key with another request is 422 idempotency_key_reused; while the first is being applied, 409 idempotency_key_in_flight. Only 2xx answers are remembered.",
        ))
        .schema(Some(
            utoipa::openapi::ObjectBuilder::new()
                .schema_type(utoipa::openapi::Type::String)
                .min_length(Some(1))
                .max_length(Some(255)),
        ))
        .build();
    op.parameters.get_or_insert_with(Vec::new).push(param);
    let r = &mut op.responses.responses;
    for (code, resp) in r.iter_mut() {
        if let (true, utoipa::openapi::RefOr::T(resp)) = (code.starts_with('2'), resp) {
            resp.headers.insert(
                "Idempotent-Replayed".into(),
                utoipa::openapi::HeaderBuilder::new()
                    .schema(
                        utoipa::openapi::ObjectBuilder::new()
                            .schema_type(utoipa::openapi::Type::String)
                            .enum_values(Some(["true"])),
                    )
                    .description(Some("Present on the replay of a remembered answer"))
                    .build(),
            );
        }
    }
    let keys = [
        (ErrorCode::IdempotencyKeyInFlight, "409"),
        (ErrorCode::IdempotencyKeyReused, "422"),
    ];
    for (code, status) in keys {
        refused_with(r, status, code);
    }
    if adds_members {
        refused_with(r, "507", ErrorCode::InsufficientStorage);
    }
}

/// `code` among the refusals an operation lists under `status`, as
/// [`crate::error::Refusals`] lists an operation's own.
fn refused_with(
    r: &mut std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>>,
    status: &str,
    code: ErrorCode,
) {
    let line = crate::error::refusal_line(code);
    match r.get_mut(status) {
        Some(utoipa::openapi::RefOr::T(resp)) if resp.description.contains(&line) => {}
        Some(utoipa::openapi::RefOr::T(resp)) => {
            resp.description = format!("{}; {line}", resp.description)
        }
        _ => {
            let description = format!("{}{line}", crate::error::REFUSED);
            r.insert(status.into(), error_response(&description).into());
        }
    }
}

/// The document as a server configured this way serves it, as JSON text, fitted to the
/// server's checks (`fit`).
pub fn document_json(has_credentials: bool) -> String {
    let mut doc = serde_json::to_value(document(has_credentials)).unwrap_or_default();
    fit::fit(&mut doc);
    doc.to_string()
}

/// The document as a server configured this way serves it (before fitting).
pub fn document(has_credentials: bool) -> utoipa::openapi::OpenApi {
    let (_, mut doc) = crate::api().split_for_parts();
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "An API key (pf_…, from `photofinish key new`) or a player's JWT",
                ))
                .build(),
        ),
    );
    let bearer = || SecurityRequirement::new("bearer", Vec::<String>::new());
    for (path, item) in doc.paths.paths.iter_mut() {
        let ops = [
            ("get", &mut item.get),
            ("put", &mut item.put),
            ("post", &mut item.post),
            ("delete", &mut item.delete),
            ("patch", &mut item.patch),
        ];
        for (method, op) in ops {
            let Some(op) = op.as_mut() else { continue };
            if let Some((_, _, adds)) = KEYED_OPERATIONS
                .iter()
                .find(|(m, p, _)| *m == method && p == path)
            {
                keyed(op, *adds);
            }
            if ALWAYS_OPEN.contains(&path.as_str()) {
                secure(op, vec![SecurityRequirement::default()], false);
            } else if !has_credentials {
                secure(op, vec![SecurityRequirement::default(), bearer()], false);
            } else if crate::auth::anonymous_may_call(method, path) {
                secure(op, vec![SecurityRequirement::default(), bearer()], true);
            } else {
                secure(op, vec![bearer()], true);
            }
        }
    }
    doc
}
