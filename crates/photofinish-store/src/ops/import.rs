//! Imports (docs/SPEC.md §11): the rows checked and built into a ranking the same way on
//! every engine, then the one command that puts the ranking in place.

use photofinish_core::config::MAX_HIDDEN_MEMBERS;
use photofinish_core::transfer::{ImportBuilder, ImportCheck, ImportSource};
use photofinish_core::{BoardError, Period, PeriodRef, Ranking};

use super::{execute_one, with_board, Engine};
use crate::command::Command;
use crate::state::Applied;

/// What [`import_rows`] read: the period it fills, the new ranking's builder, and the
/// members its rows hide (docs/SPEC.md §15).
pub type ImportedRows = (Period, ImportBuilder, Vec<String>);

/// The first half of `Leaderboard::import`, the same on every engine: the period the
/// import fills (it must be empty now; the apply checks again), and every row checked by
/// the board's rules and pushed, in file order (which is also their sequence, so equal
/// scores and times keep it), into the builder of the new ranking; the members of rows
/// marked `hidden`, at most [`MAX_HIDDEN_MEMBERS`]. The engine finishes the ranking and
/// logs the one command that puts it in place and hides them.
pub async fn import_rows<E: Engine + ?Sized>(
    e: &E,
    board: &str,
    period: &PeriodRef,
    source: &mut dyn ImportSource,
) -> Result<ImportedRows, BoardError> {
    let now = e.now_us();
    let (target, config) = with_board(e, board, |b| {
        let p = b.window().import_period(period, now)?;
        let held = b.ranking(&p).map_or(0, Ranking::len);
        if held > 0 {
            return Err(BoardError::BoardNotEmpty {
                board: board.to_owned(),
                period: p.id,
                members: held,
            });
        }
        Ok((p, b.config().clone()))
    })
    .await?;
    let mut check = ImportCheck::new(&config);
    let mut builder = ImportBuilder::new(&config);
    let mut hidden = Vec::new();
    while let Some(rows) = source.next_chunk().await? {
        for row in &rows {
            if row.hidden {
                if hidden.len() >= MAX_HIDDEN_MEMBERS {
                    return Err(BoardError::TooManyHidden(MAX_HIDDEN_MEMBERS));
                }
                hidden.push(row.member.clone());
            }
            let (at, scores) = check.row(row, now)?;
            builder.push(row, at, scores)?;
        }
    }
    Ok((target, builder, hidden))
}

/// An import's ranking, finished and saved where the engine keeps it, with what it
/// fills and hides: what [`put_import`] puts in place.
pub struct Built {
    /// The period it fills.
    pub target: Period,
    /// Where the engine saved the ranking (a file, or Redis chunks), by name.
    pub file: String,
    /// The ranking.
    pub ranking: Ranking,
    /// The members it hides.
    pub hidden: Vec<String>,
}

/// The second half of `Leaderboard::import`, the same on every engine: `ranking`, saved
/// under `file` where every replay of the log finds it, is staged in `state` and put in
/// place in `target`, and the members `hidden` hidden, by one logged command. On a
/// refusal it is unstaged; what was saved stays (the command may be in the log, and its
/// replays read it).
pub async fn put_import<E: Engine + ?Sized>(
    e: &E,
    state: &crate::State,
    board: &str,
    built: Built,
    actor: &str,
) -> Result<photofinish_core::transfer::Imported, BoardError> {
    let Built {
        target,
        file,
        ranking,
        hidden,
    } = built;
    let entries = ranking.len();
    state.stage(file.clone(), ranking);
    let cmd = Command::Import {
        board: board.to_owned(),
        period_us: target.start_us.max(0),
        file: file.clone(),
        entries,
        hidden,
    };
    match execute_one(e, board, super::audited(actor, cmd), false).await {
        Ok(Applied::Imported(period, entries)) => {
            Ok(photofinish_core::transfer::Imported { period, entries })
        }
        failed => {
            state.unstage(&file);
            Err(failed.err().unwrap_or_else(|| {
                BoardError::Unavailable("the log answered an import oddly".into())
            }))
        }
    }
}
