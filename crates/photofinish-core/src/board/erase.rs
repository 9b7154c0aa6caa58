//! A member erased from a board (docs/SPEC.md §16, docs/privacy.md): everything the board
//! holds under its name goes at once — its entries in every kept period, its seats (a
//! join, its attempts; a cohort seat stays counted as taken for its period, under no
//! name), its league tier and moves, its grants (kept nameless, so the others keep their
//! ids) and its hidden mark. A later write under the same name is a new member. The names
//! a board holds, wherever it holds them, are listed here too: what a ledgered erase is
//! looked for among.

use super::Board;
use crate::cohort::Cohorts;

impl Board {
    /// Erases `member` from the board at `at_us` (see the module docs); how many rows it
    /// held — an entry a period, a seat a period, its tier, its hidden mark, a grant each.
    /// Closes due before `at_us` are paid first, as they stood.
    pub fn erase(&mut self, member: &str, at_us: i64) -> u64 {
        self.settle_grants(at_us);
        let mut rows = 0;
        for (_, ranking) in self.periods.values_mut() {
            rows += u64::from(ranking.remove(member, at_us));
        }
        for seats in self.seats.values_mut() {
            let mut held = seats.waiting.remove(member);
            held |= seats.attempts.remove(member).is_some();
            held |= seats.cohorts.forget(member);
            if let Some(close) = &mut seats.close {
                let before = close.moves.len();
                close.moves.retain(|m| &*m.member != member);
                held |= close.moves.len() != before;
            }
            rows += u64::from(held);
        }
        self.seats.retain(|_, s| !s.is_empty());
        rows += u64::from(self.tiers.remove(member).is_some());
        rows += u64::from(self.hidden.remove(member).is_some());
        rows + self.rewards.erase(member)
    }

    /// Calls `f` with every name the board holds anything under (see the module docs),
    /// some more than once.
    pub fn for_each_name(&self, f: &mut dyn FnMut(&str)) {
        for (_, ranking) in self.periods.values() {
            ranking.for_each_entry(|member, _, _, _, _| f(member));
        }
        for seats in self.seats.values() {
            seats.waiting.iter().for_each(|m| f(m));
            seats.attempts.keys().for_each(|m| f(m));
            for (_, members) in seats.cohorts.arrivals() {
                members
                    .into_iter()
                    .filter(|m| !Cohorts::is_nameless(m))
                    .for_each(&mut *f);
            }
            seats.cohorts.waiting().into_iter().for_each(&mut *f);
        }
        self.tiers.keys().for_each(|m| f(m));
        self.hidden.keys().for_each(|m| f(m));
        self.rewards.members().for_each(f);
    }
}
