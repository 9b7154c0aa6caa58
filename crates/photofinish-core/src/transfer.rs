//! Moving a period's entries in and out in bulk (docs/SPEC.md §11): what an import carries
//! and the one check every backend runs on each entry.
//!
//! An import reads rows in chunks from an [`ImportSource`] (the HTTP door parses NDJSON into
//! them) and rebuilds the target period exactly: each row keeps its score, `reached_at` and
//! metadata, and rows with the same score and `reached_at` rank in the order they came (the
//! backend numbers them in that order). Nothing is visible until every row was read and
//! checked; then the period appears whole, or the import fails and nothing changed. The
//! period must be empty, else `board_not_empty`.

use async_trait::async_trait;

use crate::calendar::{validate_instant, Period};
use crate::columns::{check_columns, Operands, ScoreInput, Scores, Shape};
use crate::config::{validate_member_name, BoardConfig, Op, MAX_METADATA_BYTES};
use crate::error::BoardError;
use crate::ranking::{Ranking, RankingBuilder, SavedEntry, SavedTeam};
use std::collections::BTreeMap;

/// Entries one import may carry (a named limit; a board's own `max_members` may be lower).
pub const MAX_IMPORT_ENTRIES: u64 = 100_000_000;
/// Rows a door hands the backend at a time.
pub const IMPORT_CHUNK_ROWS: usize = 8192;

/// One entry to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRow {
    /// The member.
    pub member: String,
    /// Its scores, as the line gave them.
    pub scores: ImportScores,
    /// When it reached the score, µs; `None` for the import's own time.
    pub reached_at_us: Option<i64>,
    /// Its metadata, a serialized JSON object.
    pub metadata: Option<String>,
    /// The member is hidden on the board (docs/SPEC.md §15): an admin's export says so,
    /// and the import hides it again.
    pub hidden: bool,
    /// Its partition (docs/SPEC.md §17), on a board of partitions.
    pub partition: Option<String>,
    /// Its team (docs/SPEC.md §17), on a board of teams.
    pub team: Option<String>,
}

/// An import line's scores (docs/SPEC.md §13): `score` on a one-column board, or every
/// column by name — with the `score` an export writes beside them, which must be the
/// first column's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportScores {
    /// `score` alone.
    Score(i64),
    /// `scores` by name, and `score` if the line has it too.
    Named {
        /// Each column's name and value.
        pairs: Vec<(String, i64)>,
        /// The line's `score`, if any.
        first: Option<i64>,
    },
}

impl ImportScores {
    /// The tuple on a board of `config` (every column, or 400 `invalid_score`).
    fn resolve(&self, config: &BoardConfig, shape: &Shape) -> Result<Scores, BoardError> {
        let (input, first) = match self {
            ImportScores::Score(v) => (ScoreInput::Score(*v), None),
            ImportScores::Named { pairs, first } => (ScoreInput::Named(pairs.clone()), *first),
        };
        let scores = input
            .resolve(&config.columns)?
            .full(shape.len())
            .ok_or_else(|| {
                BoardError::InvalidScore(format!(
                    "an imported entry gives every one of the board's {} columns",
                    shape.len()
                ))
            })?;
        match first {
            Some(v) if v != scores.first() => Err(BoardError::InvalidScore(format!(
                "score {v} is not the first column's value {}",
                scores.first()
            ))),
            _ => Ok(scores),
        }
    }
}

/// Where an import's rows come from, a chunk at a time, in file order.
#[async_trait]
pub trait ImportSource: Send {
    /// The next rows, `None` at the end. An error (a malformed line) ends the import with
    /// nothing changed.
    async fn next_chunk(&mut self) -> Result<Option<Vec<ImportRow>>, BoardError>;
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The period filled.
    pub period: Period,
    /// Entries imported.
    pub entries: u64,
}

/// The per-row rules of an import into a board: valid names, metadata within its limit,
/// an instant a write could carry, the board's score rules and member limit, and
/// [`MAX_IMPORT_ENTRIES`]. Errors name the row (1-based, in file order).
#[derive(Debug)]
pub struct ImportCheck<'a> {
    config: &'a BoardConfig,
    shape: Shape,
    rows: u64,
}

impl<'a> ImportCheck<'a> {
    /// The check for an import into a board with `config`.
    pub fn new(config: &'a BoardConfig) -> Self {
        Self {
            config,
            shape: config.shape(),
            rows: 0,
        }
    }

    /// Rows checked so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Checks the next row; its `reached_at` defaults to `now_us`. Returns the instant and
    /// the row's tuple.
    pub fn row(&mut self, row: &ImportRow, now_us: i64) -> Result<(i64, Scores), BoardError> {
        self.rows += 1;
        let n = self.rows;
        let bad = |e: BoardError| {
            BoardError::InvalidEntries(format!("entry {n} (member {:?}): {e}", row.member))
        };
        if n > MAX_IMPORT_ENTRIES {
            return Err(BoardError::InvalidEntries(format!(
                "an import carries at most {MAX_IMPORT_ENTRIES} entries"
            )));
        }
        validate_member_name(&row.member).map_err(bad)?;
        for (what, key, has) in [
            (
                "partition",
                &row.partition,
                self.config.partitions.is_some(),
            ),
            ("team", &row.team, self.config.teams.is_some()),
        ] {
            if let Some(key) = key {
                crate::groups::validate_group_key(key).map_err(bad)?;
                if !has {
                    let why = format!("a {what} on a board without {what}s");
                    return Err(bad(BoardError::InvalidParameter(why)));
                }
            }
        }
        if let Some(m) = &row.metadata {
            if m.len() > MAX_METADATA_BYTES {
                return Err(bad(BoardError::MetadataTooLarge(m.len())));
            }
        }
        let at = row.reached_at_us.unwrap_or(now_us);
        validate_instant(at).map_err(bad)?;
        let scores = row.scores.resolve(self.config, &self.shape).map_err(bad)?;
        let first = scores.first();
        self.config
            .settings
            .rules
            .check(Op::Set, first, None, first, n - 1)
            .map_err(bad)?;
        let written = Operands::all(&scores);
        check_columns(
            &self.config.columns,
            &self.shape,
            Some(Op::Set),
            &written,
            None,
            &scores,
        )
        .map_err(bad)?;
        Ok((at, scores))
    }
}

/// An import's ranking being built: its entries, in file order ([`RankingBuilder`]), and
/// what its rows say of partitions and teams (docs/SPEC.md §17), put on the ranking when
/// it is finished. A team's `reached_at` is the latest of its members' (the last change of
/// its sum the file shows), equal ones ordered by the team's key.
pub struct ImportBuilder {
    entries: RankingBuilder,
    partitions: Option<u32>,
    team_size: Option<u32>,
    in_partitions: Vec<(String, String)>,
    teams: BTreeMap<String, (i64, Vec<String>)>,
}

impl ImportBuilder {
    /// A builder for an import into a board of `config`.
    pub fn new(config: &BoardConfig) -> Self {
        Self {
            entries: RankingBuilder::new(config.shape(), 0),
            partitions: config.partitions.map(|p| p.max),
            team_size: config.teams.map(|t| t.max_size),
            in_partitions: Vec::new(),
            teams: BTreeMap::new(),
        }
    }

    /// Adds `row`, checked ([`ImportCheck::row`]: its instant `at` and tuple `scores`),
    /// numbered after the rows before it.
    pub fn push(&mut self, row: &ImportRow, at: i64, scores: Scores) -> Result<(), BoardError> {
        self.entries.push(SavedEntry {
            member: &row.member,
            scores,
            reached_at_us: at,
            seq: self.entries.len() + 1,
            metadata: row.metadata.as_deref(),
        })?;
        if let Some(p) = &row.partition {
            self.in_partitions.push((row.member.clone(), p.clone()));
        }
        if let Some(t) = &row.team {
            let (latest, members) = self.teams.entry(t.clone()).or_insert((at, Vec::new()));
            *latest = (*latest).max(at);
            members.push(row.member.clone());
        }
        Ok(())
    }

    /// The ranking, with its members' partitions and teams: refused whole
    /// (`invalid_entries`) when they break the board's limits.
    pub fn finish(self) -> Result<Ranking, BoardError> {
        let refuse = |e: BoardError| BoardError::InvalidEntries(format!("the import's {e}"));
        let mut ranking = self
            .entries
            .finish()?
            .with_partitions(self.partitions)
            .with_teams(self.team_size);
        ranking
            .load_partitions(
                self.in_partitions
                    .iter()
                    .map(|(m, p)| (m.as_str(), p.as_str())),
            )
            .map_err(refuse)?;
        let mut teams: Vec<(i64, String, Vec<String>)> = self
            .teams
            .into_iter()
            .map(|(t, (at, m))| (at, t, m))
            .collect();
        teams.sort_unstable();
        let next_seq = teams.len() as u64 + 1;
        let saved = teams
            .into_iter()
            .enumerate()
            .map(|(i, (reached_at_us, name, members))| SavedTeam {
                name,
                reached_at_us,
                seq: i as u64 + 1,
                members,
            })
            .collect();
        ranking.load_teams(saved, next_seq).map_err(refuse)?;
        if let Some(team) = ranking.team_past_range() {
            return Err(BoardError::InvalidEntries(format!(
                "team {team:?}'s members sum past the i64 range (docs/SPEC.md §17)"
            )));
        }
        Ok(ranking)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScoreRules;

    fn row(member: &str, score: i64) -> ImportRow {
        ImportRow {
            member: member.into(),
            scores: ImportScores::Score(score),
            reached_at_us: Some(1_000),
            metadata: None,
            hidden: false,
            partition: None,
            team: None,
        }
    }

    #[test]
    fn rows_break_the_boards_rules_by_number() {
        let mut config = BoardConfig::default();
        config.settings.rules = ScoreRules {
            max_score: Some(100),
            max_members: Some(2),
            ..ScoreRules::default()
        };
        let mut c = ImportCheck::new(&config);
        assert_eq!(c.row(&row("a", 100), 0).map(|r| r.0), Ok(1_000));
        let e = c.row(&row("b", 101), 0).expect_err("err").to_string();
        assert!(
            e.contains("entry 2 (member \"b\")") && e.contains("max_score"),
            "{e}"
        );
        let mut c = ImportCheck::new(&config);
        c.row(&row("a", 1), 0).expect("ok");
        c.row(&row("b", 1), 0).expect("ok");
        let e = c.row(&row("c", 1), 0).expect_err("err").to_string();
        assert!(e.contains("entry 3") && e.contains("maximum of 2"), "{e}");
        let e = ImportCheck::new(&config)
            .row(&row("bad name\n", 1), 0)
            .expect_err("err");
        assert_eq!(e.code(), crate::ErrorCode::InvalidEntries);
        let mut huge = row("m", 1);
        huge.metadata = Some("x".repeat(MAX_METADATA_BYTES + 1));
        assert!(ImportCheck::new(&config).row(&huge, 0).is_err());
        let mut late = row("m", 1);
        late.reached_at_us = Some(i64::MAX);
        assert!(ImportCheck::new(&config).row(&late, 0).is_err());
        let mut now = row("m", 1);
        now.reached_at_us = None;
        assert_eq!(ImportCheck::new(&config).row(&now, 77).map(|r| r.0), Ok(77));
    }
}
