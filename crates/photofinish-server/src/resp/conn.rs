//! One RESP connection: read, take every complete command in the buffer ([`frame::parse`],
//! at most [`RESP_MAX_PIPELINE`] a round), run them in order, write every answer with one
//! syscall, read again. A malformed request is answered `-ERR Protocol error: …` after the
//! commands before it, and the connection closes; nothing else is touched.
//!
//! **Writes share a commit.** Consecutive plain writes of a round (`LB.INCR/SET/BEST/
//! SUBMIT` without `IDEMPOTENCY`) are gathered and handed to the service together, one
//! batch per board ([`Gate::write_each`](crate::gate::Gate::write_each)): the embedded
//! store queues them in order under one group commit, Redis sends them as one pipeline.
//! Any other command first waits for the writes before it, so a pipeline reads its own
//! writes and every answer is in order. Consecutive member reads (`LB.SCORE`, `LB.RANK`)
//! are gathered the same way and run as one read of each board (`super::reads`).
//!
//! **Credentials** are checked when given (`AUTH`, `HELLO … AUTH`) and again at the start
//! of every round, so a revoked key or an expired player token stops working on
//! connections already open. Each board command takes one token from the caller's rate
//! limit, as each HTTP request does.
//!
//! **A stop's grace** ([`crate::stop`]): a command still running when it ends is answered
//! `-ERR shutting_down …`, as an HTTP request is answered 503, and so is every command of
//! the round after it, which does not run; then the connection closes.

use photofinish_core::access::Caller;
use photofinish_core::op::{WriteOutcome, WriteRequest};
use photofinish_core::BoardName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::cmd::read::is_member_read;
use super::cmd::spec::{Family, Spec};
use super::cmd::table::{self, lookup};
use super::cmd::write::{self, Parsed, Shape};
use super::cmd::{self, connection};
use super::error::{wrong_arity, CmdError};
use super::frame::{self, Args, Batch};
use super::reads::PendingRead;
use super::reply::Out;
use super::session::Session;
use crate::error::ApiError;
use crate::gate::Gate;
use crate::limits::{RESP_MAX_PIPELINE, RESP_MAX_REPLY_BYTES, RESP_READ_CHUNK, RESP_WRITE_TIMEOUT};

/// A board command of the current run of plain writes. Nearly every one is a `Write`, so
/// it is held inline: boxing it to match the refusal's size would allocate once a write.
#[allow(clippy::large_enum_variant)]
enum Pending {
    /// Refused before parsing (rate limit, board name).
    Failed(CmdError),
    /// A write to `board`, parsed or not.
    Write {
        board: BoardName,
        parsed: Result<Parsed, CmdError>,
    },
}

/// What a round has gathered and not yet run: plain writes (`run`) or member reads
/// (`reads`, `super::reads`) — one of them at most, each run before the other gathers, so
/// answers keep their order.
#[derive(Default)]
struct Gathered {
    run: Vec<(&'static str, Pending)>,
    reads: Vec<PendingRead>,
}

/// The answer of one write of a run.
type Answered = Result<WriteOutcome, CmdError>;

/// One board's writes of a run: each with its place in the run.
type BoardWrites = (BoardName, Vec<(usize, Result<WriteRequest, CmdError>)>);

impl Session {
    /// Runs every command of `batch` in order, writing answers to `self.out` (and out
    /// to `w` whenever they pass [`RESP_MAX_REPLY_BYTES`]).
    pub async fn round<W: AsyncWrite + Unpin>(
        &mut self,
        batch: &Batch,
        w: &mut W,
    ) -> std::io::Result<()> {
        self.refresh();
        let mut expired = self.app.stop.expired();
        // Set when the stop's grace ended inside this round: what was running, and every
        // command after it, is answered `shutting_down`, and the connection closes.
        let mut over = false;
        let mut gathered = Gathered::default();
        for i in 0..batch.len() {
            let args = batch.command(i);
            let spec = lookup(args.get(0));
            if over {
                self.cut(spec.map_or("unknown", |s| s.name));
                continue;
            }
            if let Some(spec) = spec {
                if let Some(cut) = self.gather(spec, &args, &mut gathered, &mut expired).await {
                    over = cut;
                    continue;
                }
            }
            over = self.flush_gathered(&mut gathered, &mut expired).await;
            if self.out.buf.len() >= RESP_MAX_REPLY_BYTES {
                write_out(w, &mut self.out).await?;
            }
            match spec {
                None => {
                    self.error(&unknown(&args));
                    self.count("unknown", false);
                }
                Some(spec) if over => self.cut(spec.name),
                Some(spec) => {
                    let done = crate::stop::before_grace(&mut expired, self.execute(spec, &args))
                        .await
                        .unwrap_or_else(|| {
                            over = true;
                            Err(CmdError::Api(crate::stop::shutting_down()))
                        });
                    self.count(spec.name, done.is_ok());
                    if let Err(e) = done {
                        self.error(&e);
                    }
                }
            }
            if self.quit {
                break;
            }
        }
        over |= self.flush_gathered(&mut gathered, &mut expired).await;
        self.quit |= over;
        Ok(())
    }

    /// Gathers command `args` (`spec`) when it is a plain write or a member read, the
    /// other kind run first: `None` when it is neither (it runs alone), else whether the
    /// stop's grace ended while those ran (then it is answered `shutting_down`).
    async fn gather(
        &mut self,
        spec: &'static Spec,
        args: &Args<'_>,
        gathered: &mut Gathered,
        expired: &mut tokio::sync::watch::Receiver<bool>,
    ) -> Option<bool> {
        if !spec.arity_fits(args.len()) {
            return None;
        }
        let write = write::is_write(spec) && !has_idempotency_key(args);
        if !write && !is_member_read(spec) {
            return None;
        }
        let over = if write {
            self.flush_reads(&mut gathered.reads, expired).await
        } else {
            self.flush_run(&mut gathered.run, expired).await
        };
        if over {
            self.cut(spec.name);
        } else if write {
            let slot = match self.take_token().and_then(|()| cmd::args::board(args)) {
                Err(e) => Pending::Failed(e),
                Ok(board) => Pending::Write {
                    board,
                    parsed: write::parse(spec, args),
                },
            };
            gathered.run.push((spec.name, slot));
        } else {
            gathered.reads.push(self.gather_read(spec, args));
        }
        Some(over)
    }

    /// Runs what the round gathered (writes or member reads: one of them at most) before
    /// a command that is not gathered. Whether the stop's grace ended first.
    async fn flush_gathered(
        &mut self,
        gathered: &mut Gathered,
        expired: &mut tokio::sync::watch::Receiver<bool>,
    ) -> bool {
        let over = self.flush_run(&mut gathered.run, expired).await;
        self.flush_reads(&mut gathered.reads, expired).await || over
    }

    /// Answers a command the stop's grace ended before it ran (or while it ran):
    /// `shutting_down`, its outcome unknown.
    fn cut(&mut self, command: &'static str) {
        self.count(command, false);
        self.error(&CmdError::Api(crate::stop::shutting_down()));
    }

    async fn execute(&mut self, spec: &Spec, args: &Args<'_>) -> Result<(), CmdError> {
        if !spec.arity_fits(args.len()) {
            return Err(wrong_arity(spec.name));
        }
        match spec.family {
            Family::Connection => return connection::run(self, spec, args).await,
            Family::Table => return table::run(self, args),
            _ => {}
        }
        self.take_token()?;
        match spec.family {
            Family::Query => return cmd::query::run(self, spec, args).await,
            Family::Member => return cmd::member::run(self, spec, args).await,
            _ => {}
        }
        let board = cmd::args::board(args)?;
        match spec.family {
            Family::Write => write::run_keyed(self, spec, args, &board).await,
            Family::Board => cmd::board::run(self, spec, args, &board).await,
            Family::Teams => cmd::teams::run(self, spec, args, board).await,
            _ => cmd::read::run(self, spec, args, board).await,
        }
    }

    /// Applies the gathered plain writes — one batch per board, the boards at once — and
    /// answers each in order. Whether the stop's grace ended first (`expired`): then the
    /// writes without an answer are answered `shutting_down`, their outcome unknown.
    async fn flush_run(
        &mut self,
        run: &mut Vec<(&'static str, Pending)>,
        expired: &mut tokio::sync::watch::Receiver<bool>,
    ) -> bool {
        if run.is_empty() {
            return false;
        }
        let n = run.len();
        let mut answers: Vec<Option<Answered>> = (0..n).map(|_| None).collect();
        let mut shapes = vec![Shape::Score; n];
        let names: Vec<&'static str> = run.iter().map(|(name, _)| *name).collect();
        let mut groups: Vec<BoardWrites> = Vec::new();
        for (i, (_, p)) in run.drain(..).enumerate() {
            match p {
                Pending::Failed(e) => answers[i] = Some(Err(e)),
                Pending::Write { board, parsed } => {
                    let request = parsed.map(|p| {
                        shapes[i] = p.shape;
                        p.request
                    });
                    match groups.iter_mut().find(|(b, _)| *b == board) {
                        Some((_, items)) => items.push((i, request)),
                        None => groups.push((board, vec![(i, request)])),
                    }
                }
            }
        }
        let (gate, caller) = (&self.app.gate, &self.identity.caller);
        let group_answers = futures_util::future::join_all(
            groups
                .into_iter()
                .map(|(board, items)| write_board(gate, caller, board, items)),
        );
        let group_answers = crate::stop::before_grace(expired, group_answers).await;
        let over = group_answers.is_none();
        for (i, a) in group_answers.into_iter().flatten().flatten() {
            answers[i] = Some(a);
        }
        for (i, a) in answers.into_iter().enumerate() {
            self.count(names[i], matches!(a, Some(Ok(_))));
            match a {
                Some(Ok(w)) => write::reply(&mut self.out, shapes[i], &w),
                Some(Err(e)) => self.error(&e),
                None if over => self.error(&CmdError::Api(crate::stop::shutting_down())),
                None => self.error(&CmdError::Raw("ERR no answer for this write".into())),
            }
        }
        over
    }
}

/// One board's share of a run: the caller's access to the board once, then its writes as
/// one batch, each authorized alone; each answer with its slot in the run.
async fn write_board(
    gate: &Gate,
    caller: &Caller,
    board: BoardName,
    items: Vec<(usize, Result<WriteRequest, CmdError>)>,
) -> Vec<(usize, Answered)> {
    let target = match gate.check_write_target(caller, &board).await {
        Ok(t) => t,
        Err(e) => {
            let e = ApiError::from(e);
            return items
                .into_iter()
                .map(|(i, _)| (i, Err(CmdError::Api(e.clone()))))
                .collect();
        }
    };
    let mut done = Vec::with_capacity(items.len());
    // Each write moved once, into the batch (a request is ~200 bytes; history §36).
    let (mut slots, mut writes) = (
        Vec::with_capacity(items.len()),
        Vec::with_capacity(items.len()),
    );
    for (i, r) in items {
        match r {
            Ok(w) => {
                slots.push(i);
                writes.push(w);
            }
            Err(e) => done.push((i, Err(e))),
        }
    }
    let applied = gate.write_each(&target, writes).await;
    done.extend(
        slots
            .into_iter()
            .zip(applied)
            .map(|(i, r)| (i, r.map_err(CmdError::from))),
    );
    done
}

/// Whether a write's options include `IDEMPOTENCY` (its options start at argument 4).
fn has_idempotency_key(args: &Args<'_>) -> bool {
    (4..args.len())
        .step_by(2)
        .any(|i| args.get(i).eq_ignore_ascii_case(b"IDEMPOTENCY"))
}

/// Redis's answer to a command it does not know.
fn unknown(args: &Args<'_>) -> CmdError {
    let quoted = |b: &[u8]| {
        let s = String::from_utf8_lossy(&b[..b.len().min(128)]).into_owned();
        format!("'{s}'")
    };
    let rest: Vec<String> = args.iter().skip(1).take(8).map(quoted).collect();
    CmdError::Raw(format!(
        "ERR unknown command {}, with args beginning with: {}",
        quoted(args.get(0)),
        rest.join(" ")
    ))
}

/// Writes and clears the pending answers; a client that does not read them within
/// [`RESP_WRITE_TIMEOUT`] is cut off.
async fn write_out<W: AsyncWrite + Unpin>(w: &mut W, out: &mut Out) -> std::io::Result<()> {
    if out.buf.is_empty() {
        return Ok(());
    }
    match tokio::time::timeout(RESP_WRITE_TIMEOUT, w.write_all(&out.buf)).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client did not read its answers",
            ))
        }
    }
    out.buf.clear();
    if out.buf.capacity() > RESP_MAX_REPLY_BYTES * 2 {
        out.buf.shrink_to(RESP_MAX_REPLY_BYTES);
    }
    Ok(())
}

/// Serves one connection until the client leaves, sends `QUIT`, breaks the protocol,
/// stalls inside a command past `partial_timeout`, or the server closes.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    session: Session,
    partial_timeout: std::time::Duration,
    closing: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    photofinish_redis::node::serving(rounds(stream, session, partial_timeout, closing)).await
}

/// [`serve`]'s loop: a round of the commands that arrived together at a time.
async fn rounds<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    mut session: Session,
    partial_timeout: std::time::Duration,
    mut closing: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(RESP_READ_CHUNK);
    let mut batch = Batch::default();
    loop {
        batch.clear();
        let (used, error) = frame::parse(&buf, &mut batch, RESP_MAX_PIPELINE);
        buf.drain(..used);
        if !batch.is_empty() {
            // The round's commands began when it arrived: on the Redis backend, one
            // catch-up after that serves every read among them.
            photofinish_redis::node::requests_began(Some(std::time::Instant::now()));
            let served = session.round(&batch, &mut stream).await;
            photofinish_redis::node::requests_began(None);
            served?;
        }
        if let Some(e) = &error {
            session.out.error(&format!("ERR Protocol error: {}", e.0));
        }
        write_out(&mut stream, &mut session.out).await?;
        if error.is_some() || session.quit {
            return stream.shutdown().await;
        }
        if batch.len() == RESP_MAX_PIPELINE {
            continue; // more complete commands may wait in the buffer
        }
        if *closing.borrow() {
            return stream.shutdown().await;
        }
        buf.reserve(RESP_READ_CHUNK);
        let read = async {
            if buf.is_empty() {
                stream.read_buf(&mut buf).await
            } else {
                // Inside a command: the rest must come in time (a slow-loris guard).
                tokio::time::timeout(partial_timeout, stream.read_buf(&mut buf))
                    .await
                    .unwrap_or_else(|_| {
                        Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "a command did not arrive in time",
                        ))
                    })
            }
        };
        let n = tokio::select! {
            n = read => n?,
            () = async { drop(closing.wait_for(|c| *c).await) } => return stream.shutdown().await,
        };
        if n == 0 {
            return Ok(());
        }
    }
}
