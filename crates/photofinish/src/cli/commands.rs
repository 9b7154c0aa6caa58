//! The client commands: boards, scores and reads over the HTTP API (`Client`, printed by
//! `table`), a checked backup download, and the Redis namespace upgrade.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Subcommand;
use photofinish_server::wire::types::{BoardConfigBody, PartitionsView, TeamsView, WriteBody};
use serde_json::{json, Value};

use crate::client::Client;
use crate::table;

/// Submit a score.
#[derive(Debug, clap::Args)]
pub(super) struct SubmitArgs {
    /// Board name.
    pub(super) board: String,
    /// Member name.
    pub(super) member: String,
    /// Score (an integer; any i64).
    #[arg(allow_hyphen_values = true)]
    pub(super) score: String,
    /// incr, best or set (default: the board's).
    #[arg(long)]
    pub(super) op: Option<String>,
    /// Metadata, a JSON object.
    #[arg(long)]
    pub(super) metadata: Option<String>,
    /// RFC 3339 instant of the write.
    #[arg(long)]
    pub(super) at: Option<String>,
    /// The member's partition (docs/SPEC.md §17).
    #[arg(long)]
    pub(super) partition: Option<String>,
    /// The member's team (docs/SPEC.md §17).
    #[arg(long)]
    pub(super) team: Option<String>,
}

/// Show the top of a board.
#[derive(Debug, clap::Args)]
pub(super) struct TopArgs {
    /// Board name.
    pub(super) board: String,
    /// Rows.
    #[arg(long, default_value_t = 10)]
    pub(super) limit: u64,
    /// 0-based start.
    #[arg(long, default_value_t = 0)]
    pub(super) offset: u64,
    /// ordinal, competition or dense.
    #[arg(long)]
    pub(super) ranking: Option<String>,
    /// current, previous or a period id.
    #[arg(long)]
    pub(super) period: Option<String>,
    /// One partition's standings alone (docs/SPEC.md §17).
    #[arg(long)]
    pub(super) partition: Option<String>,
}

/// Show a member's rank.
#[derive(Debug, clap::Args)]
pub(super) struct RankArgs {
    /// Board name.
    pub(super) board: String,
    /// Member name.
    pub(super) member: String,
    /// ordinal, competition or dense.
    #[arg(long)]
    pub(super) ranking: Option<String>,
    /// current, previous or a period id.
    #[arg(long)]
    pub(super) period: Option<String>,
    /// Its rank within this partition (docs/SPEC.md §17).
    #[arg(long)]
    pub(super) partition: Option<String>,
}

/// Show the rows around a member.
#[derive(Debug, clap::Args)]
pub(super) struct AroundArgs {
    /// Board name.
    pub(super) board: String,
    /// Member name.
    pub(super) member: String,
    /// Rows above.
    #[arg(long, default_value_t = 5)]
    pub(super) before: u64,
    /// Rows below.
    #[arg(long, default_value_t = 5)]
    pub(super) after: u64,
    /// ordinal, competition or dense.
    #[arg(long)]
    pub(super) ranking: Option<String>,
    /// current, previous or a period id.
    #[arg(long)]
    pub(super) period: Option<String>,
    /// Its neighbours within this partition (docs/SPEC.md §17).
    #[arg(long)]
    pub(super) partition: Option<String>,
}

/// Show a period's partitions, each with its members (docs/SPEC.md §17).
#[derive(Debug, clap::Args)]
pub(super) struct PartitionsArgs {
    /// Board name.
    pub(super) board: String,
    /// Rows.
    #[arg(long, default_value_t = 10)]
    pub(super) limit: u64,
    /// 0-based start.
    #[arg(long, default_value_t = 0)]
    pub(super) offset: u64,
    /// current, previous or a period id.
    #[arg(long)]
    pub(super) period: Option<String>,
}

/// Show a board's teams, or one team with its members (docs/SPEC.md §17).
#[derive(Debug, clap::Args)]
pub(super) struct TeamsArgs {
    /// Board name.
    pub(super) board: String,
    /// One team: its rank, score and members.
    pub(super) team: Option<String>,
    /// Rows.
    #[arg(long, default_value_t = 10)]
    pub(super) limit: u64,
    /// 0-based start.
    #[arg(long, default_value_t = 0)]
    pub(super) offset: u64,
    /// ordinal, competition or dense.
    #[arg(long)]
    pub(super) ranking: Option<String>,
    /// current, previous or a period id.
    #[arg(long)]
    pub(super) period: Option<String>,
}

/// `photofinish board …`.
#[derive(Debug, Subcommand)]
pub(super) enum BoardCommand {
    /// Create a board (or confirm it exists with the same config).
    Create {
        /// Board name.
        name: String,
        /// desc or asc.
        #[arg(long)]
        order: Option<String>,
        /// Default operator: incr, best or set.
        #[arg(long)]
        update: Option<String>,
        /// never, daily, weekly or monthly.
        #[arg(long)]
        reset: Option<String>,
        /// IANA time zone.
        #[arg(long)]
        timezone: Option<String>,
        /// monday or sunday.
        #[arg(long)]
        week_start: Option<String>,
        /// Periods kept.
        #[arg(long)]
        retention: Option<u32>,
        /// Most partitions a period holds (docs/SPEC.md §17).
        #[arg(long)]
        partitions: Option<u32>,
        /// Most members a team holds (docs/SPEC.md §17).
        #[arg(long)]
        team_size: Option<u32>,
    },
    /// List the boards you may read, by name, a page at a time.
    List {
        /// Boards to skip.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Boards to show (at most 1000; the server's default, 100, when absent).
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Show one board.
    Show {
        /// Board name.
        name: String,
    },
    /// Delete a board.
    Delete {
        /// Board name.
        name: String,
    },
}

fn query(pairs: &[(&str, Option<String>)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| ((*k).to_owned(), v)))
        .collect()
}

/// `photofinish backup`: the download goes to a temporary file beside `out`, is checked
/// whole (magic, checksum, every record), and only then takes the name.
pub(super) async fn backup(client: &Client, out: &std::path::Path, json: bool) -> Result<()> {
    let mut tmp_name = out.as_os_str().to_owned();
    tmp_name.push(".part");
    let tmp = PathBuf::from(tmp_name);
    let mut file =
        std::fs::File::create(&tmp).map_err(|e| anyhow!("cannot create {}: {e}", tmp.display()))?;
    let bar = crate::transfer_cmd::progress(None, "backup", true);
    let fetched = client
        .download_with(&["v1", "admin", "backup"], &[], &mut file, &mut |chunk| {
            bar.inc(chunk.len() as u64)
        })
        .await;
    bar.finish_and_clear();
    let fetched = fetched.and_then(|bytes| {
        file.sync_all()
            .map_err(|e| anyhow!("cannot sync {}: {e}", tmp.display()))?;
        let data = std::fs::read(&tmp)?;
        let loaded = photofinish_store::snapshot::read(&data)
            .map_err(|e| anyhow!("the backup does not verify: {}", e.0))?;
        Ok((bytes, loaded.last_lsn, loaded.state.boards().len()))
    });
    let (bytes, lsn, boards) = match fetched {
        Ok(v) => v,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, out).map_err(|e| anyhow!("cannot name {}: {e}", out.display()))?;
    if json {
        println!(
            "{}",
            json!({"file": out, "bytes": bytes, "last_lsn": lsn, "boards": boards})
        );
    } else {
        println!(
            "backup of {boards} boards at log position {lsn}: {} ({bytes} bytes)",
            out.display()
        );
    }
    Ok(())
}

/// `photofinish upgrade`: moves the namespace to this release's format and says what it did.
pub(super) async fn redis_upgrade(storage: &str, ns: &str, json: bool) -> Result<()> {
    use photofinish_redis::formats::NEWEST;
    let target = photofinish_redis::Target::parse(storage).ok_or_else(|| {
        anyhow!("--storage must be redis://host:port[/db] or redis+cluster://host:port[,...]")
    })?;
    let r = photofinish_redis::upgrade_log::upgrade_to_log(&target, ns).await?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "already_current": r.already_current,
                "moved_from": r.moved_from,
                "boards": r.boards,
                "periods": r.periods,
                "entries": r.entries,
                "idempotency_keys": r.keys,
                "format": NEWEST,
            })
        );
    } else if r.already_current {
        println!("namespace {ns:?} is at format {NEWEST} already; nothing to do");
    } else if let Some(from) = &r.moved_from {
        println!(
            "namespace {ns:?} moved from format {from} to {NEWEST}: the boards' next \
             snapshots are written in the newer format, which nodes of an older release \
             cannot read"
        );
    } else {
        println!(
            "namespace {ns:?} converted to the log layout: {} board(s), {} period(s), {} \
             entries, {} idempotency key(s)",
            r.boards, r.periods, r.entries, r.keys
        );
    }
    Ok(())
}

/// `photofinish board …`.
pub(super) async fn board(client: &Client, json: bool, command: BoardCommand) -> Result<()> {
    match command {
        BoardCommand::Create {
            name,
            order,
            update,
            reset,
            timezone,
            week_start,
            retention,
            partitions,
            team_size,
        } => {
            let config = BoardConfigBody {
                order,
                update,
                reset,
                timezone,
                week_start,
                retention,
                partitions: partitions.map(|max| PartitionsView { max }),
                teams: team_size.map(|max_size| TeamsView { max_size }),
                ..BoardConfigBody::default()
            };
            let v = client.create_board(&name, &config).await?;
            table::print(json, &v, table::board)
        }
        BoardCommand::List { offset, limit } => {
            table::print(json, &client.boards(offset, limit).await?, |list| {
                table::boards(list, offset)
            })
        }
        BoardCommand::Show { name } => {
            table::print(json, &client.board(&name).await?, table::board)
        }
        BoardCommand::Delete { name } => {
            client.delete_board(&name).await?;
            table::print(json, &json!({"deleted": name}), |_| {
                format!("deleted board {name}\n")
            })
        }
    }
}

/// `photofinish submit`.
pub(super) async fn submit(client: &Client, json: bool, a: SubmitArgs) -> Result<()> {
    let metadata = a
        .metadata
        .map(|m| serde_json::from_str(&m).map_err(|e| anyhow!("--metadata is not JSON: {e}")))
        .transpose()?;
    let write = WriteBody {
        member: a.member,
        score: Some(Value::String(a.score)),
        scores: None,
        op: a.op.map(Value::String),
        metadata,
        at: a.at.map(Value::String),
        period: None,
        partition: a.partition,
        team: a.team,
    };
    let v = client.submit(&a.board, &write).await?;
    table::print(json, &v, table::write)
}

/// `photofinish top`.
pub(super) async fn top(client: &Client, json: bool, a: TopArgs) -> Result<()> {
    let q = query(&[
        ("limit", Some(a.limit.to_string())),
        ("offset", Some(a.offset.to_string())),
        ("ranking", a.ranking),
        ("period", a.period),
        ("partition", a.partition),
    ]);
    table::print(json, &client.entries(&a.board, &q).await?, table::entries)
}

/// `photofinish partitions`: a period's partitions, sorted by key.
pub(super) async fn partitions(client: &Client, json: bool, a: PartitionsArgs) -> Result<()> {
    let q = query(&[
        ("limit", Some(a.limit.to_string())),
        ("offset", Some(a.offset.to_string())),
        ("period", a.period),
    ]);
    let v = client.partitions(&a.board, &q).await?;
    table::print(json, &v, table::partitions)
}

/// `photofinish teams`: the teams' ranking, or one team with its members.
pub(super) async fn teams(client: &Client, json: bool, a: TeamsArgs) -> Result<()> {
    let q = query(&[
        ("limit", Some(a.limit.to_string())),
        ("offset", Some(a.offset.to_string())),
        ("ranking", a.ranking),
        ("period", a.period),
    ]);
    match a.team {
        None => table::print(json, &client.teams(&a.board, &q).await?, table::teams),
        Some(team) => {
            let v = client.team(&a.board, &team, &q).await?;
            table::print(json, &v, table::team)
        }
    }
}

/// `photofinish rank`.
pub(super) async fn rank(client: &Client, json: bool, a: RankArgs) -> Result<()> {
    let q = query(&[
        ("ranking", a.ranking),
        ("period", a.period),
        ("partition", a.partition),
    ]);
    let v = client.member(&a.board, &a.member, &q).await?;
    table::print(json, &v, table::member)
}

/// `photofinish around`.
pub(super) async fn around(client: &Client, json: bool, a: AroundArgs) -> Result<()> {
    let q = query(&[
        ("before", Some(a.before.to_string())),
        ("after", Some(a.after.to_string())),
        ("ranking", a.ranking),
        ("period", a.period),
        ("partition", a.partition),
    ]);
    let v = client.around(&a.board, &a.member, &q).await?;
    table::print(json, &v, table::entries)
}

/// `photofinish restore`: a data directory made from a backup (checked whole first), and
/// the erasure ledger `ledger` (with the key it was written under) applied to it.
pub(super) async fn restore(
    file: &std::path::Path,
    data_dir: &std::path::Path,
    ledger: Option<(&std::path::Path, Option<&std::path::Path>)>,
    json: bool,
) -> Result<()> {
    if let Some((ledger, key)) = ledger {
        photofinish_server::ledger::check_restore_key(ledger, key)?;
    }
    let r = photofinish_store::backup::restore(file, data_dir)?;
    let erased = match ledger {
        Some((ledger, key)) => {
            Some(photofinish_server::ledger::reapply_in_dir(data_dir, key, ledger).await?)
        }
        None => None,
    };
    if json {
        let erased = erased.map(
            |e| json!({"entries": e.entries, "members": e.members, "rows_dropped": e.dropped.rows}),
        );
        println!(
            "{}",
            json!({"last_lsn": r.last_lsn, "boards": r.boards, "data_dir": data_dir,
                   "erasure_ledger": erased})
        );
        return Ok(());
    }
    println!(
        "restored {} boards at log position {} into {}",
        r.boards,
        r.last_lsn,
        data_dir.display()
    );
    if let Some(e) = erased {
        println!(
            "erasure ledger: {} entries, {} members erased again, {} rows dropped",
            e.entries, e.members, e.dropped.rows
        );
    }
    Ok(())
}
