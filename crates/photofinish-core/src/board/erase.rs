//! A member erased from a board (docs/SPEC.md §16, docs/privacy.md): everything the board
//! holds under its name goes at once — its entries in every kept period, its seats (a
//! join, its attempts; a cohort seat stays counted as taken for its period, under no
//! name), its league tier and moves, its grants (kept nameless, so the others keep their
//! ids) and its hidden mark. A later write under the same name is a new member.

use super::Board;

impl Board {
    /// Erases `member` from the board at `at_us` (see the module docs); whether the board
    /// held anything of it. Closes due before `at_us` are paid first, as they stood.
    pub fn erase(&mut self, member: &str, at_us: i64) -> bool {
        self.settle_grants(at_us);
        let mut held = false;
        for (_, ranking) in self.periods.values_mut() {
            held |= ranking.remove(member);
        }
        for seats in self.seats.values_mut() {
            held |= seats.waiting.remove(member);
            held |= seats.attempts.remove(member).is_some();
            held |= seats.cohorts.forget(member);
            if let Some(close) = &mut seats.close {
                let before = close.moves.len();
                close.moves.retain(|m| &*m.member != member);
                held |= close.moves.len() != before;
            }
        }
        self.seats.retain(|_, s| !s.is_empty());
        held |= self.tiers.remove(member).is_some();
        held |= self.hidden.remove(member).is_some();
        held |= self.rewards.erase(member);
        held
    }
}
