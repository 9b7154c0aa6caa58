//! Reads across boards through the gate: a member's entry (docs/SPEC.md §10), its grants
//! and its export (§16) on each board the caller may read, with boards it may not read
//! left out exactly like missing ones.

use photofinish_core::access::{may_audit_across, may_list, may_read_member_data, Caller, Viewer};
use photofinish_core::audit::{AuditEntry, AuditQuery, MAX_AUDIT_ENTRIES};
use photofinish_core::op::{BoardRead, MemberData, ReadMember, ReadMemberData, ReadMemberRewards};
use photofinish_core::query::{distinct_names, MAX_MEMBER_BOARDS};
use photofinish_core::rewards::{GrantState, GrantStatus};
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
        let names = self
            .readable_among(caller, boards, Some(MAX_MEMBER_BOARDS))
            .await?;
        let options = ReadOptions {
            ranking,
            period: PeriodRef::Current,
            partition: None,
        };
        let reads: Vec<ReadMember> = names
            .into_iter()
            .map(|board| ReadMember {
                board,
                member: member.to_string(),
                options: options.clone(),
            })
            .collect();
        let answers = self.read_each(caller, &reads).await;
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

    /// A member's grants (docs/SPEC.md §16) in `status` (`None`: all) on each board in
    /// `boards`, or every board the caller may read (all of them, not the first 1,000 a
    /// member's entries take: a grant on any board is the member's to see), newest first.
    /// A player reads its own alone (403 for another's).
    pub async fn member_rewards(
        &self,
        caller: &Caller,
        member: &MemberName,
        boards: Option<Vec<BoardName>>,
        status: Option<GrantStatus>,
    ) -> Result<Vec<GrantState>, BoardError> {
        may_read_member_data(caller, member)?;
        let names = self.readable_among(caller, boards, None).await?;
        let reads: Vec<ReadMemberRewards> = names
            .into_iter()
            .map(|board| ReadMemberRewards {
                board,
                member: member.clone(),
                status,
            })
            .collect();
        let mut out = Vec::new();
        for answer in self.read_each(caller, &reads).await {
            match answer {
                Ok(grants) => out.extend(grants),
                Err(BoardError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        // Newest first, stably: ties keep each board's own order (its newest period
        // first), boards by name.
        out.sort_by_key(|g| std::cmp::Reverse(g.grant.granted_at_us));
        Ok(out)
    }

    /// A member's export (docs/SPEC.md §16, docs/privacy.md): what each board the caller
    /// may read holds about it (every board, by name; one holding nothing is left out) —
    /// and, to an admin, the audit entries naming it on the boards it administers. A
    /// player exports its own alone (403 for another's).
    pub async fn member_export(
        &self,
        caller: &Caller,
        member: &MemberName,
    ) -> Result<MemberExport, BoardError> {
        may_read_member_data(caller, member)?;
        let reads: Vec<ReadMemberData> = self
            .readable_boards(caller)
            .await?
            .into_iter()
            .map(|board| ReadMemberData {
                board,
                member: member.clone(),
            })
            .collect();
        let answers = self.read_each(caller, &reads).await;
        let mut boards = Vec::new();
        for (read, answer) in reads.into_iter().zip(answers) {
            match answer {
                Ok(data) if data.is_empty() => {}
                Ok(data) => boards.push((read.board.into_string(), data)),
                Err(BoardError::BoardNotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let audit = if may_audit_across(caller).is_ok() {
            let q = AuditQuery {
                board: None,
                member: Some(member.to_string()),
                since_us: None,
                limit: MAX_AUDIT_ENTRIES,
            };
            Some(self.audit(caller, &q).await?)
        } else {
            None
        };
        Ok(MemberExport { boards, audit })
    }

    /// Each of `reads`, at once, as `caller` sees its board.
    async fn read_each<R: BoardRead>(
        &self,
        caller: &Caller,
        reads: &[R],
    ) -> Vec<Result<R::Output, BoardError>> {
        let viewers: Vec<Viewer> = reads
            .iter()
            .map(|r| Viewer::of(caller, r.board()))
            .collect();
        futures_util::future::join_all(
            reads
                .iter()
                .zip(&viewers)
                .map(|(r, viewer)| self.service.read_as(r, viewer)),
        )
        .await
    }

    /// The boards of `boards` the caller may read (repeats count once), or, when `None`,
    /// every board it may read, by name, the first `cap` of them if a cap is given: boards
    /// it may not read are left out exactly like boards that do not exist, so the answer
    /// never tells whether one exists.
    async fn readable_among(
        &self,
        caller: &Caller,
        boards: Option<Vec<BoardName>>,
        cap: Option<usize>,
    ) -> Result<Vec<BoardName>, BoardError> {
        Ok(match boards {
            None => {
                let mut names = self.readable_boards(caller).await?;
                names.truncate(cap.unwrap_or(usize::MAX));
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
        })
    }
}

/// A member's export as the gate gathered it ([`Gate::member_export`]).
#[derive(Debug)]
pub struct MemberExport {
    /// Each board holding something about the member, by name.
    pub boards: Vec<(String, MemberData)>,
    /// The audit entries naming it, newest first: to an admin alone.
    pub audit: Option<Vec<AuditEntry>>,
}
