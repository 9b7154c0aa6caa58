//! A board's hidden members (docs/SPEC.md §15, docs/moderation.md): who is hidden and how
//! ([`HideScope`]: on the board, across every board, or both), the limit, and each
//! ranking's kept hidden members, which every read's view of the ranking leaves out
//! ([`Ranking::view`], [`crate::ranking::Visible`]).

use super::Board;
use crate::config::MAX_HIDDEN_MEMBERS;
use crate::error::BoardError;
use crate::ranking::Ranking;

/// How a member is hidden (docs/SPEC.md §15): on one board, or across every board
/// (present and future). A member is hidden on a board while either holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HideScope {
    /// On this board.
    Board,
    /// Across every board.
    Everywhere,
}

impl HideScope {
    /// Its bit in a board's hidden members (and the snapshot's).
    pub fn bit(self) -> u8 {
        match self {
            HideScope::Board => 1,
            HideScope::Everywhere => 2,
        }
    }
}

impl Board {
    /// Hides `member` on this board (docs/SPEC.md §15); whether it was not hidden so
    /// before. `too_many_hidden` beyond [`MAX_HIDDEN_MEMBERS`]; on error nothing changed.
    pub fn hide(&mut self, member: &str, at_us: i64) -> Result<bool, BoardError> {
        self.hide_as(member, HideScope::Board, Some(at_us))
    }

    /// Shows `member` again on this board; whether it was hidden so. A member hidden
    /// across every board stays hidden until that is undone too.
    pub fn unhide(&mut self, member: &str, at_us: i64) -> bool {
        self.unhide_as(member, HideScope::Board, Some(at_us))
    }

    /// Hides `member` by `scope`; whether it was not hidden so before. A member hidden
    /// by either scope is hidden. The board's limit counts the members hidden on the
    /// board itself ([`HideScope::Board`]); those hidden everywhere count against the
    /// limit of the set of members hidden everywhere, decided once for every board (so a
    /// hide everywhere never fails on one board and holds on another). At `at_us` its
    /// score leaves its teams' sums (docs/SPEC.md §17); `None` for a hide restored rather
    /// than made — a snapshot's (its teams are loaded after, counted without their hidden
    /// members), a new board's, a log's of no board — which changes no team.
    pub fn hide_as(
        &mut self,
        member: &str,
        scope: HideScope,
        at_us: Option<i64>,
    ) -> Result<bool, BoardError> {
        let bit = scope.bit();
        let bits = self.hidden.get(member).copied().unwrap_or(0);
        if bits & bit != 0 {
            return Ok(false);
        }
        if scope == HideScope::Board && !self.can_hide(1) {
            return Err(BoardError::TooManyHidden(MAX_HIDDEN_MEMBERS));
        }
        // Grants being made see one hidden set, whole (docs/SPEC.md §16).
        self.finish_grants();
        self.hidden.insert(member.into(), bits | bit);
        if bits == 0 {
            for (_, ranking) in self.periods.values_mut() {
                match at_us {
                    Some(at_us) => ranking.set_hidden(member, true, at_us),
                    None => ranking.mark_hidden(member, true),
                }
            }
        }
        Ok(true)
    }

    /// Whether `more` members not hidden on the board yet may be hidden on it (the
    /// board's limit, [`MAX_HIDDEN_MEMBERS`], of its own hides).
    pub fn can_hide(&self, more: usize) -> bool {
        let here = self
            .hidden
            .values()
            .filter(|&&b| b & HideScope::Board.bit() != 0)
            .count();
        here + more <= MAX_HIDDEN_MEMBERS
    }

    /// Whether `member` is hidden on this board by the board's own hide.
    pub fn hidden_here(&self, member: &str) -> bool {
        self.hidden
            .get(member)
            .is_some_and(|&b| b & HideScope::Board.bit() != 0)
    }

    /// Undoes `scope`'s hide of `member`; whether it was hidden so. It is shown once no
    /// scope hides it, its score back in its teams' sums at `at_us` (`None`: as
    /// [`Self::hide_as`]).
    pub fn unhide_as(&mut self, member: &str, scope: HideScope, at_us: Option<i64>) -> bool {
        let bit = scope.bit();
        let Some(bits) = self.hidden.get_mut(member) else {
            return false;
        };
        if *bits & bit == 0 {
            return false;
        }
        if *bits == bit {
            // Grants being made see one hidden set, whole (docs/SPEC.md §16).
            self.finish_grants();
        }
        let Some(bits) = self.hidden.get_mut(member) else {
            return false;
        };
        *bits &= !bit;
        if *bits == 0 {
            self.hidden.remove(member);
            for (_, ranking) in self.periods.values_mut() {
                match at_us {
                    Some(at_us) => ranking.set_hidden(member, false, at_us),
                    None => ranking.mark_hidden(member, false),
                }
            }
        }
        true
    }

    /// Whether `member` is hidden on this board (here, or across every board).
    pub fn is_hidden(&self, member: &str) -> bool {
        !self.hidden.is_empty() && self.hidden.contains_key(member)
    }

    /// The hidden members with how each is hidden ([`HideScope::bit`]s), sorted by name
    /// (the snapshot's).
    pub fn hidden_scopes(&self) -> Vec<(&str, u8)> {
        let mut all: Vec<(&str, u8)> = self.hidden.iter().map(|(m, &b)| (&**m, b)).collect();
        all.sort_unstable();
        all
    }

    /// How many members the board hides.
    pub fn hidden_count(&self) -> usize {
        self.hidden.len()
    }

    /// The hidden members, sorted by name.
    pub fn hidden(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.hidden.keys().map(|m| &**m).collect();
        all.sort_unstable();
        all
    }

    /// Marks the hidden members `ranking` holds (a ranking put in place whole).
    pub(super) fn mark_hidden_in(&self, ranking: &mut Ranking) {
        for m in self.hidden.keys() {
            ranking.mark_hidden(m, true);
        }
    }
}
