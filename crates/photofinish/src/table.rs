//! Aligned text tables for the client's answers (or the JSON itself with `--json`).

use anyhow::Result;
use serde_json::Value;

/// Prints `v` as JSON or through `render`.
pub fn print(json: bool, v: &Value, render: impl Fn(&Value) -> String) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(v)?);
    } else {
        print!("{}", render(v));
    }
    Ok(())
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Columns padded to their widest cell; numbers right-aligned.
pub fn grid(headers: &[&str], rows: &[Vec<Value>]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(cell).collect()).collect();
    let widths: Vec<usize> = (0..headers.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([headers[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let numeric: Vec<bool> = (0..headers.len())
        .map(|i| rows.iter().all(|r| r[i].is_number()))
        .collect();
    let line = |vals: Vec<String>| -> String {
        let parts: Vec<String> = vals
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let pad = widths[i] - s.chars().count();
                if numeric[i] {
                    format!("{}{s}", " ".repeat(pad))
                } else {
                    format!("{s}{}", " ".repeat(pad))
                }
            })
            .collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = line(headers.iter().map(|h| h.to_uppercase()).collect());
    for r in cells {
        out.push_str(&line(r));
    }
    out
}

/// A page of entries.
pub fn entries(v: &Value) -> String {
    let rows: Vec<Vec<Value>> = v["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    vec![
                        e["rank"].clone(),
                        e["member"].clone(),
                        e["score"].clone(),
                        e["reached_at"].clone(),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    format!(
        "period {}  ({} members)\n{}",
        cell(&v["period"]),
        cell(&v["total"]),
        grid(&["rank", "member", "score", "reached_at"], &rows)
    )
}

/// One member.
pub fn member(v: &Value) -> String {
    grid(
        &["rank", "member", "score", "reached_at", "total"],
        &[vec![
            v["rank"].clone(),
            v["member"].clone(),
            v["score"].clone(),
            v["reached_at"].clone(),
            v["total"].clone(),
        ]],
    )
}

/// A write's result.
pub fn write(v: &Value) -> String {
    grid(
        &["member", "score", "rank", "changed", "reached_at", "period"],
        &[vec![
            v["member"].clone(),
            v["score"].clone(),
            v["rank"].clone(),
            v["changed"].clone(),
            v["reached_at"].clone(),
            v["period"].clone(),
        ]],
    )
}

/// The board columns, which are also the JSON keys they come from.
const BOARD_HEADERS: [&str; 8] = [
    "name",
    "order",
    "update",
    "reset",
    "timezone",
    "members",
    "period",
    "next_reset_at",
];

fn board_row(b: &Value) -> Vec<Value> {
    BOARD_HEADERS.iter().map(|k| b[*k].clone()).collect()
}

/// One board.
pub fn board(v: &Value) -> String {
    grid(&BOARD_HEADERS, &[board_row(v)])
}

/// All boards.
pub fn boards(v: &Value) -> String {
    let rows: Vec<Vec<Value>> = v["boards"]
        .as_array()
        .map(|a| a.iter().map(board_row).collect())
        .unwrap_or_default();
    grid(&BOARD_HEADERS, &rows)
}

/// The keys of a keys file: name, scope, boards, rate, created.
pub fn keys(v: &Value) -> String {
    let rows: Vec<Vec<Value>> = v["keys"]
        .as_array()
        .map(|ks| {
            ks.iter()
                .map(|k| {
                    let boards = k["boards"]
                        .as_array()
                        .map(|b| b.iter().map(cell).collect::<Vec<_>>().join(","))
                        .unwrap_or_default();
                    vec![
                        k["name"].clone(),
                        k["scope"].clone(),
                        Value::String(boards),
                        k["rate"].clone(),
                        k["created_at"].clone(),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    grid(&["name", "scope", "boards", "rate", "created_at"], &rows)
}
