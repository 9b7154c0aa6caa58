//! Aligned text tables for the client's answers (or the JSON itself with `--json`).

use anyhow::Result;
use photofinish_server::wire::types::{
    BoardList, BoardView, EntriesPage, MemberView, PartitionListView, TeamDetailView, TeamListView,
    WriteResult,
};
use serde::Serialize;
use serde_json::{json, Value};

/// Prints `v` as JSON or through `render`.
pub fn print<T: Serialize>(json: bool, v: &T, render: impl Fn(&T) -> String) -> Result<()> {
    if json {
        // Through a Value, as the answer was printed before it was typed: keys sorted,
        // metadata pretty-printed like the rest.
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::to_value(v)?)?
        );
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
pub fn entries(v: &EntriesPage) -> String {
    let rows: Vec<Vec<Value>> = v
        .entries
        .iter()
        .map(|e| {
            vec![
                json!(e.rank),
                json!(e.member),
                json!(e.score),
                json!(e.reached_at),
            ]
        })
        .collect();
    format!(
        "period {}  ({} members)\n{}",
        v.period,
        v.total,
        grid(&["rank", "member", "score", "reached_at"], &rows)
    )
}

/// A page of partitions.
pub fn partitions(v: &PartitionListView) -> String {
    let rows: Vec<Vec<Value>> = v
        .partitions
        .iter()
        .map(|p| vec![json!(p.partition), json!(p.members)])
        .collect();
    format!(
        "period {}  ({} partitions)\n{}",
        v.period,
        v.total,
        grid(&["partition", "members"], &rows)
    )
}

/// A page of teams.
pub fn teams(v: &TeamListView) -> String {
    let rows: Vec<Vec<Value>> = v
        .entries
        .iter()
        .map(|t| {
            vec![
                json!(t.rank),
                json!(t.team),
                json!(t.score),
                json!(t.members),
                json!(t.reached_at),
            ]
        })
        .collect();
    format!(
        "period {}  ({} teams)\n{}",
        v.period,
        v.total,
        grid(&["rank", "team", "score", "members", "reached_at"], &rows)
    )
}

/// One team and a page of its members.
pub fn team(v: &TeamDetailView) -> String {
    let head = grid(
        &["rank", "team", "score", "members", "reached_at"],
        &[vec![
            json!(v.rank),
            json!(v.team),
            json!(v.score),
            json!(v.members),
            json!(v.reached_at),
        ]],
    );
    let rows: Vec<Vec<Value>> = v
        .entries
        .iter()
        .map(|e| {
            vec![
                json!(e.rank),
                json!(e.member),
                json!(e.score),
                json!(e.reached_at),
            ]
        })
        .collect();
    format!(
        "period {}\n{head}{}",
        v.period,
        grid(&["rank", "member", "score", "reached_at"], &rows)
    )
}

/// One member.
pub fn member(v: &MemberView) -> String {
    grid(
        &["rank", "member", "score", "reached_at", "total"],
        &[vec![
            json!(v.rank),
            json!(v.member),
            json!(v.score),
            json!(v.reached_at),
            json!(v.total),
        ]],
    )
}

/// A write's result.
pub fn write(v: &WriteResult) -> String {
    grid(
        &["member", "score", "rank", "changed", "reached_at", "period"],
        &[vec![
            json!(v.member),
            json!(v.score),
            json!(v.rank),
            json!(v.changed),
            json!(v.reached_at),
            json!(v.period),
        ]],
    )
}

/// The board columns.
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

fn board_row(b: &BoardView) -> Vec<Value> {
    vec![
        json!(b.name),
        json!(b.order),
        json!(b.update),
        json!(b.reset),
        json!(b.timezone),
        json!(b.members),
        json!(b.period),
        json!(b.next_reset_at),
    ]
}

/// One board.
pub fn board(v: &BoardView) -> String {
    grid(&BOARD_HEADERS, &[board_row(v)])
}

/// All boards.
pub fn boards(v: &BoardList, offset: u64) -> String {
    let rows: Vec<Vec<Value>> = v.boards.iter().map(board_row).collect();
    let mut out = grid(&BOARD_HEADERS, &rows);
    let shown = v.boards.len() as u64;
    if shown < v.total {
        // A page of a longer list: say which, and how to see the rest.
        let first = if shown == 0 { offset } else { offset + 1 };
        out.push_str(&format!(
            "boards {first}-{} of {} (--offset, --limit for more)\n",
            offset + shown,
            v.total
        ));
    }
    out
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
