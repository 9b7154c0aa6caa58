//! A pipeline's member reads, run together. Consecutive `LB.SCORE` / `LB.RANK` commands of
//! a round ([`super::cmd::read::is_member_read`]) are gathered as the writes are
//! ([`super::conn`]), then run as one read per board ([`Each`]): the caller's access and
//! the board's freshness checked once, the board's lock taken once, and every member's
//! lookup asked of memory before the first is read, so a pipeline of ranks waits for its
//! cache misses together. Each command takes its rate-limit token, is parsed and is
//! answered in its place, exactly as it is alone.

use photofinish_core::access::Caller;
use photofinish_core::op::{Each, ReadStanding, Standing};
use photofinish_core::BoardError;

use super::cmd::read::{answer_member, member_read};
use super::cmd::spec::Spec;
use super::error::CmdError;
use super::frame::Args;
use super::session::Session;
use crate::gate::Gate;

/// A gathered member read: its command, and its read or why it has none.
pub(super) type PendingRead = (&'static Spec, Result<ReadStanding, CmdError>);

/// What a gathered read found.
type Found = Result<Standing, BoardError>;

impl Session {
    /// The member read `args` asks (`spec` is `LB.SCORE` or `LB.RANK`, its arity checked):
    /// its token taken, its board and arguments parsed, in the order a command alone
    /// takes them.
    pub(super) fn gather_read(&self, spec: &'static Spec, args: &Args<'_>) -> PendingRead {
        let read = self
            .take_token()
            .and_then(|()| super::cmd::args::board(args))
            .and_then(|board| member_read(spec, args, board));
        (spec, read)
    }

    /// Runs the gathered reads — one [`Each`] per board, the boards at once — and answers
    /// each in order. Whether the stop's grace ended first (`expired`): then every read
    /// is answered `shutting_down`.
    pub(super) async fn flush_reads(
        &mut self,
        reads: &mut Vec<PendingRead>,
        expired: &mut tokio::sync::watch::Receiver<bool>,
    ) -> bool {
        if reads.is_empty() {
            return false;
        }
        // Each command's refusal, or the board (its index in `groups`) whose read it is.
        let mut slots: Vec<(&'static Spec, Result<usize, CmdError>)> =
            Vec::with_capacity(reads.len());
        let mut groups: Vec<Vec<ReadStanding>> = Vec::new();
        for (spec, read) in reads.drain(..) {
            let slot =
                read.map(
                    |read| match groups.iter().position(|g| g[0].board == read.board) {
                        Some(g) => {
                            groups[g].push(read);
                            g
                        }
                        None => {
                            groups.push(vec![read]);
                            groups.len() - 1
                        }
                    },
                );
            slots.push((spec, slot));
        }
        let (gate, caller) = (&self.app.gate, &self.identity.caller);
        let found = futures_util::future::join_all(
            groups
                .into_iter()
                .map(|reads| read_board(gate, caller, reads)),
        );
        // Each board's answers, taken in order as its commands come.
        let mut found: Option<Vec<Result<std::vec::IntoIter<Found>, BoardError>>> =
            crate::stop::before_grace(expired, found)
                .await
                .map(|all| all.into_iter().map(|f| f.map(Vec::into_iter)).collect());
        let over = found.is_none();
        for (spec, slot) in slots {
            let done = match (slot, found.as_mut()) {
                (Err(e), _) => Err(e),
                (Ok(_), None) => Err(CmdError::Api(crate::stop::shutting_down())),
                (Ok(g), Some(found)) => match &mut found[g] {
                    Ok(answers) => match answers.next() {
                        Some(row) => answer_member(&mut self.out, spec, row),
                        None => Err(CmdError::Raw("ERR no answer for this read".into())),
                    },
                    Err(e) => answer_member(&mut self.out, spec, Err(e.clone())),
                },
            };
            self.count(spec.name, done.is_ok());
            if let Err(e) = done {
                self.error(&e);
            }
        }
        over
    }
}

/// One board's gathered reads as one [`Each`], answered in their order. A refusal of the
/// whole (access, a board not found) is every read's answer, as it would be each one's
/// alone.
async fn read_board(
    gate: &Gate,
    caller: &Caller,
    reads: Vec<ReadStanding>,
) -> Result<Vec<Found>, BoardError> {
    match Each::new(reads) {
        Some(each) => gate.read(caller, &each).await,
        None => Err(BoardError::Unavailable(
            "reads of one board named two boards".to_owned(),
        )),
    }
}
