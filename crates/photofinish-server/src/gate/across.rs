//! Reads across boards through the gate: a member's entry on each board the caller may
//! read (docs/SPEC.md §10), with boards it may not read left out exactly like missing ones.

use photofinish_core::access::{may_list, Caller, Viewer};
use photofinish_core::op::ReadMember;
use photofinish_core::query::{distinct_names, MAX_MEMBER_BOARDS};
use photofinish_core::view::{MemberRow, ReadOptions};
use photofinish_core::{BoardError, BoardName, MemberName, PeriodRef, RankStyle, RunRead};

use super::Gate;

impl Gate {
    /// A member's entry in the current period of each board in `boards` (repeats count
    /// once), or, when `None`, of every board the caller may read, by name, at most
    /// [`MAX_MEMBER_BOARDS`]. Boards the caller may not read are left out exactly like
    /// boards that do not exist or do not hold the member, so the answer never tells
    /// whether a board the caller may not read exists. The boards are read at once.
    pub async fn member_boards(
        &self,
        caller: &Caller,
        member: &MemberName,
        boards: Option<Vec<BoardName>>,
        ranking: RankStyle,
    ) -> Result<Vec<(String, MemberRow)>, BoardError> {
        let names: Vec<BoardName> = match boards {
            None => {
                let mut names = self.readable_boards(caller).await?;
                names.truncate(MAX_MEMBER_BOARDS);
                names
            }
            Some(asked) => {
                let readable = distinct_names(asked).into_iter().map(|board| async move {
                    let flags = self.flags(&board).await?;
                    let ok = flags.is_some_and(|f| may_list(caller, &board, f));
                    Ok::<_, BoardError>(ok.then_some(board))
                });
                let checked = futures_util::future::join_all(readable).await;
                checked
                    .into_iter()
                    .filter_map(Result::transpose)
                    .collect::<Result<_, _>>()?
            }
        };
        let options = ReadOptions {
            ranking,
            period: PeriodRef::Current,
        };
        let reads: Vec<ReadMember> = names
            .into_iter()
            .map(|board| ReadMember {
                board,
                member: member.to_string(),
                options: options.clone(),
            })
            .collect();
        let viewers: Vec<Viewer> = reads.iter().map(|r| Viewer::of(caller, &r.board)).collect();
        let answers = futures_util::future::join_all(
            reads
                .iter()
                .zip(&viewers)
                .map(|(r, viewer)| self.service.read_as(r, viewer)),
        )
        .await;
        let mut out = Vec::new();
        for (read, answer) in reads.into_iter().zip(answers) {
            match answer {
                Ok(row) => out.push((read.board.into_string(), row)),
                Err(BoardError::BoardNotFound(_) | BoardError::MemberNotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}
