//! The web console (docs/SPEC.md §8) at `/`: three static files built into the binary
//! (`console/` beside this crate's `src/`: plain HTML, CSS and JavaScript, no library, no
//! CDN, nothing fetched at build time). The page reads the same public API as any client,
//! with the credential its user types in, so it needs no access rule of its own.

use axum::http::header;
use axum::response::IntoResponse;

const INDEX_HTML: &str = include_str!("../../console/index.html");
const CONSOLE_CSS: &str = include_str!("../../console/console.css");
const CONSOLE_JS: &str = include_str!("../../console/console.js");

/// The page's own files only: scripts, styles, API calls and the event stream come from
/// this server; nothing may frame it.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
        ],
        body,
    )
}

/// `GET /` (with or without `?board=…`): the console page.
pub async fn index() -> impl IntoResponse {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /console.css`.
pub async fn css() -> impl IntoResponse {
    asset("text/css; charset=utf-8", CONSOLE_CSS)
}

/// `GET /console.js`.
pub async fn js() -> impl IntoResponse {
    asset("text/javascript; charset=utf-8", CONSOLE_JS)
}
