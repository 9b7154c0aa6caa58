//! A board's log in Redis (docs/redis-layout.md): the plumbing the scale-out layout stands on,
//! and nothing of a board's rules. Entries are opaque payloads (the embedded log's command
//! encoding), numbered 1, 2, 3 … in a stream of their own and chained by a check, so a
//! node that applies them can tell a gap, a lost tail or a rewritten entry from the next
//! entry ([`Tail`]). One script call appends a group of entries and answers the ones the
//! caller had not yet seen ([`BoardLog::append`]); [`snapshot`] holds the lease and the
//! snapshot chunks. Every key of a board shares its hash slot (`{board}`).
//!
//! The Lua here is log plumbing only: `append.lua` (number, chain, append), `lease.lua`
//! (a key held by a token: the snapshot lease, the webhook's claim) and `publish.lua`
//! (publish under the lease, trim). Each script's keys and arguments are documented where
//! Rust calls it; no board rule is in Lua.

mod heads;
pub mod snapshot;

use std::sync::{Arc, LazyLock};

use redis::{Script, Value};

use crate::conn::Conn;
use heads::HeadRounds;

/// Most missed entries one append answers; past this the caller is told it is behind
/// and reads them with [`BoardLog::read`] (an append's answer stays small).
pub const MAX_MISSED_ENTRIES: u64 = 1_000;

/// Most entries one read answers.
pub const MAX_READ_ENTRIES: usize = 10_000;

/// `append.lua`: appends a group of entries to a board's log (docs/redis-layout.md,
/// "Appending"): numbers them after the head, chains each check from the one before, and
/// answers the numbers, the last check and the entries after the caller's `after` that it
/// has not applied (`behind` past [`MAX_MISSED_ENTRIES`]). A group is appended at most
/// once: a call with a group id already appended (a retry after a timeout) answers where
/// that group stands instead. Nothing is appended for a caller whose log is not this one
/// (`after` past the head, no longer held, or held with another check: `diverged`), nor
/// for a stamp further than allowed from Redis's `TIME` (`skew`, with that time). An
/// entry that takes an import names its ranking (`imp<id>.<chunks>`): the chunks, written
/// with a TTL before the append, must all be there (else `import_gone`), and are
/// persisted and listed in `imported` at the entry with it — so the chunks of an import
/// whose append never happened expire, and listed ones go with the trim past them.
/// - KEYS: 1 log stream, 2 head hash, 3 recent group ids (sorted set, score = first
///   entry), 4 the import counter (chunks are `<it>:<id>:<i>`), 5 imports taken (sorted
///   set).
/// - ARGV: 1 after (-1: none wanted), 2 after's check as the caller took it, 3 most
///   missed entries answered, 4 stamp (µs; the node's clock less its offset, [`SkewBound`]),
///   5 largest skew from Redis's `TIME` (µs; -1: not checked), 6 group id, 7 how many
///   import names follow (k), 8…7+k the names, 8+k… payloads.
static APPEND: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("append.lua")));

/// A fresh id for one append's group: random per process, then counted.
pub fn group_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static PROCESS: LazyLock<u64> = LazyLock::new(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    });
    format!("{:016x}.{}", *PROCESS, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The keys of one board's log (docs/redis-layout.md, "Keys").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogKeys {
    /// The stream of entries, ids `0-n`.
    pub log: String,
    /// `n` and `c` of the last entry.
    pub head: String,
    /// The snapshot lease's holder (a fencing token).
    pub lease: String,
    /// The counter fencing tokens are drawn from.
    pub fence: String,
    /// The published snapshot's description.
    pub snap: String,
    /// The counter imports number their rankings with.
    pub imports: String,
    /// The imports whose chunks are in Redis (sorted set of [`import file`] names, score =
    /// the entry that took it, `+inf` until one has): deleted once the log is trimmed past
    /// that entry.
    ///
    /// [`import file`]: crate::replica::import_file
    pub imported: String,
    /// The ids of the groups appended lately (a retried append answers, not appends).
    pub groups: String,
    /// The namespace's format key (not in the board's slot): which snapshot format the
    /// board's publisher writes ([`crate::formats`]).
    pub format: String,
}

impl LogKeys {
    /// The keys of `board` in `namespace`.
    pub fn new(namespace: &str, board: &str) -> Self {
        let base = format!("{namespace}:{{{board}}}:");
        Self {
            log: format!("{base}log"),
            head: format!("{base}head"),
            lease: format!("{base}lease"),
            fence: format!("{base}fence"),
            snap: format!("{base}snap"),
            imports: format!("{base}imports"),
            imported: format!("{base}imported"),
            groups: format!("{base}groups"),
            format: crate::layout::format_key(namespace),
        }
    }

    /// The key prefix of the chunks of import `id`'s ranking.
    pub fn import_prefix(&self, id: u64) -> String {
        format!("{}:{id}:", self.imports)
    }

    /// The key prefix of the chunks of the snapshot taken at entry `n` under `token`.
    pub fn chunk_prefix(&self, token: u64, n: u64) -> String {
        format!("{}:{token}.{n}:", self.snap)
    }
}

/// The check of an entry: the first 64 bits of SHA-1 over the previous entry's check (as
/// hex text; empty before the first entry) and this entry's payload, as 16 hex digits —
/// the same in `append.lua` (`redis.sha1hex`) and here.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Check(pub String);

impl Check {
    /// The check of the entry after one checked `self` whose payload is `payload`.
    pub fn next(&self, payload: &[u8]) -> Check {
        use sha1::Digest;
        // RustCrypto's SHA-1 uses the CPU's SHA extensions where it has them (detected at
        // run time): one a write on the Redis path (docs/bench-history.md §40).
        let mut h = sha1::Sha1::new();
        h.update(self.0.as_bytes());
        h.update(payload);
        let digest = h.finalize();
        let mut hex = String::with_capacity(16);
        for b in &digest[..8] {
            use std::fmt::Write;
            let _ = write!(hex, "{b:02x}");
        }
        Check(hex)
    }
}

/// One entry of a board's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its number: 1, 2, 3 … in the board's log.
    pub n: u64,
    /// Its check.
    pub check: Check,
    /// What it says (opaque here).
    pub payload: Vec<u8>,
}

/// The last entry's number and check (`n = 0` and an empty check before the first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Head {
    /// The last entry's number.
    pub n: u64,
    /// Its check.
    pub check: Check,
}

/// The entries an append found before its own, after the caller's `after`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missed {
    /// Every one of them, in order (none when the caller was at the head).
    Entries(Vec<Entry>),
    /// More than [`MAX_MISSED_ENTRIES`]: read them with [`BoardLog::read`].
    Behind,
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The first appended entry's number.
    pub first: u64,
    /// The last one's (`first - 1` when nothing was appended).
    pub last: u64,
    /// The last one's check.
    pub check: Check,
    /// What came before them that the caller had not seen.
    pub missed: Missed,
}

/// How far an append's stamp may be from Redis's `TIME` (`--max-clock-skew`): at most
/// `max_us` once `offset_us` — how far ahead of the wall clock the node's clock is meant
/// to run (the hidden `PHOTOFINISH_CLOCK_OFFSET_US` tests cross a period's end with,
/// docs/SPEC.md §14) — is taken off the stamp. The entry keeps the stamp as the node's
/// clock read it: the offset moves the node's time, the check compares wall clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkewBound {
    /// The largest distance, µs.
    pub max_us: i64,
    /// The node clock's offset from the wall clock, µs (0 in service).
    pub offset_us: i64,
}

/// How a log operation fails.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LogError {
    /// Redis did not answer, or refused.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// The append's stamp is further from Redis's clock than allowed.
    #[error("clock skew: this node's stamp {stamp_us} µs, less its clock offset of {offset_us} µs, is more than {max_skew_us} µs from redis's time {redis_us} µs")]
    Skew {
        /// The node's stamp.
        stamp_us: i64,
        /// How far ahead of the wall clock the node's clock is meant to run.
        offset_us: i64,
        /// Redis's `TIME`.
        redis_us: i64,
        /// The bound.
        max_skew_us: i64,
    },
    /// The log does not hold the caller's place as the caller took it (past its head, no
    /// longer held, or another entry there): nothing was appended; load the board again.
    #[error("the log does not hold this node's last entry as it took it")]
    Diverged,
    /// What Redis holds is not what the layout says it holds.
    #[error("damaged log data: {0}")]
    Damaged(String),
    /// The entries before the caller's are in a format newer than the caller's (the
    /// first byte of a payload, docs/redis-layout.md "Versions"): nothing was appended.
    #[error("the board's log holds an entry in format {found}, newer than this node writes: nothing was appended; upgrade this node to serve the board")]
    Newer {
        /// The format found.
        found: u32,
    },
    /// An import's ranking was no longer in Redis when its entry was to be appended (its
    /// chunks expired): nothing was appended.
    #[error("import {0}: its ranking expired before its entry was appended; import again")]
    ImportGone(String),
}

/// Where a node stands in a board's log, and the rule for taking the next entry: it must
/// be numbered one past the last and chain from its check (docs/redis-layout.md, "Entries").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tail {
    /// The last entry taken.
    pub n: u64,
    /// Its check.
    pub check: Check,
}

/// Why a node can no longer follow a board's log from where it stands: it must drop the
/// board and load it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Divergence {
    /// The next entry is not numbered one past the last taken (a trimmed gap).
    #[error("entry {found} follows entry {after}: a gap")]
    Gap {
        /// The last entry taken.
        after: u64,
        /// The entry found.
        found: u64,
    },
    /// The entry does not chain from the last taken (the log was rewritten).
    #[error("entry {n} does not chain from the entry before it")]
    Mismatch {
        /// The entry.
        n: u64,
    },
    /// The log refused an append from here: it does not hold the last entry taken as it
    /// was taken. Nothing was appended; the board must be loaded again (then the append
    /// may be tried again).
    #[error("the log refused an append after entry {after}: it does not hold it as taken")]
    Refused {
        /// The last entry taken.
        after: u64,
    },
    /// The log's head is behind what was taken (a lost tail, a restore).
    #[error("the log ends at entry {head} but entry {taken} was taken")]
    Shorter {
        /// The head.
        head: u64,
        /// The last entry taken.
        taken: u64,
    },
}

impl Tail {
    /// Takes `e` if it is the next entry.
    pub fn take(&mut self, e: &Entry) -> Result<(), Divergence> {
        if e.n != self.n + 1 {
            return Err(Divergence::Gap {
                after: self.n,
                found: e.n,
            });
        }
        if self.check.next(&e.payload) != e.check {
            return Err(Divergence::Mismatch { n: e.n });
        }
        self.n = e.n;
        self.check = e.check.clone();
        Ok(())
    }

    /// Whether a head read from Redis can follow from here.
    pub fn follows(&self, head: &Head) -> Result<(), Divergence> {
        if head.n < self.n || (head.n == self.n && head.check != self.check) {
            return Err(Divergence::Shorter {
                head: head.n,
                taken: self.n,
            });
        }
        Ok(())
    }
}

/// One board's log in Redis.
#[derive(Debug, Clone)]
pub struct BoardLog {
    conn: Conn,
    keys: LogKeys,
    heads: Arc<HeadRounds>,
}

impl BoardLog {
    /// The log of the board whose keys are `keys`, over `conn`.
    pub fn new(conn: Conn, keys: LogKeys) -> Self {
        let (answer, _) = tokio::sync::watch::channel((0, Ok(Head::default())));
        Self {
            conn,
            keys,
            heads: Arc::new(HeadRounds::new(answer)),
        }
    }

    /// Its keys.
    pub fn keys(&self) -> &LogKeys {
        &self.keys
    }

    /// The connection it uses.
    pub(crate) fn conn(&self) -> &Conn {
        &self.conn
    }

    /// Appends `payloads` as the next entries, atomically, and answers the entries after
    /// `after` (where the caller stands; `None`: none wanted) that came before them.
    /// `stamp_us` is the node's clock at the append; with `max_skew_us`, a stamp further
    /// than that from Redis's `TIME` is refused ([`LogError::Skew`]). A caller whose place
    /// the log no longer holds as it took it is refused ([`LogError::Diverged`]). Refused,
    /// nothing is appended. The group carries an id of its own: a retry of the same call
    /// (the client re-sends after a timeout) answers where the group stands instead of
    /// appending it twice.
    pub async fn append(
        &self,
        after: Option<&Tail>,
        stamp_us: i64,
        max_skew_us: Option<i64>,
        payloads: &[Vec<u8>],
    ) -> Result<Appended, LogError> {
        let skew = max_skew_us.map(|max_us| SkewBound {
            max_us,
            offset_us: 0,
        });
        self.append_group(&group_id(), after, stamp_us, skew, &[], payloads)
            .await
    }

    /// [`Self::append`] under the group id `group` (a retry sends the same one), taking
    /// the imports named `imports` ([`crate::replica::import_file`]): their chunks, written
    /// with a TTL, are persisted and listed at the last entry appended, in the same script
    /// ([`LogError::ImportGone`] if one is gone).
    pub async fn append_group(
        &self,
        group: &str,
        after: Option<&Tail>,
        stamp_us: i64,
        skew: Option<SkewBound>,
        imports: &[&str],
        payloads: &[Vec<u8>],
    ) -> Result<Appended, LogError> {
        let offset_us = skew.map_or(0, |s| s.offset_us);
        let mut inv = APPEND.key(&self.keys.log);
        inv.key(&self.keys.head)
            .key(&self.keys.groups)
            .key(&self.keys.imports)
            .key(&self.keys.imported)
            .arg(after.map_or(-1, |t| i128::from(t.n)))
            .arg(after.map_or("", |t| t.check.0.as_str()))
            .arg(MAX_MISSED_ENTRIES)
            // The script compares the stamp with Redis's `TIME`: the stamp as the wall
            // clock read it, without the node's offset.
            .arg(stamp_us.saturating_sub(offset_us))
            .arg(skew.map_or(-1, |s| s.max_us))
            .arg(group)
            .arg(imports.len());
        for name in imports {
            inv.arg(*name);
        }
        for p in payloads {
            inv.arg(p.as_slice());
        }
        let reply: Value = self.conn.invoke(&inv).await?;
        let items = array(reply, "append")?;
        refused(&items, stamp_us, offset_us, skew)?;
        let first = number(items.get(1), "first")?;
        let last = number(items.get(2), "last")?;
        let check = Check(text(items.get(3), "check")?);
        let missed = match items.get(4) {
            None | Some(Value::Nil) => Missed::Entries(Vec::new()),
            Some(Value::BulkString(b)) if b == b"behind" => Missed::Behind,
            Some(Value::SimpleString(s)) if s == "behind" => Missed::Behind,
            Some(v) => Missed::Entries(entries(v.clone())?),
        };
        Ok(Appended {
            first,
            last,
            check,
            missed,
        })
    }

    /// Up to `limit` (at most [`MAX_READ_ENTRIES`]) entries after entry `after`, in order.
    /// The first may not be `after + 1` if the log was trimmed past it ([`Tail::take`]
    /// tells).
    pub async fn read(&self, after: u64, limit: usize) -> Result<Vec<Entry>, LogError> {
        let mut cmd = redis::cmd("XRANGE");
        cmd.arg(&self.keys.log)
            .arg(format!("0-{}", u128::from(after) + 1))
            .arg("+")
            .arg("COUNT")
            .arg(limit.clamp(1, MAX_READ_ENTRIES));
        entries(self.conn.query(&cmd).await?)
    }

    /// The last entry's number and check: one O(1) call (what a read waits to have
    /// applied, docs/redis-layout.md "Reads").
    pub async fn head(&self) -> Result<Head, LogError> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&self.keys.head).arg("n").arg("c");
        let items = array(self.conn.query(&cmd).await?, "head")?;
        match items.first() {
            None | Some(Value::Nil) => Ok(Head::default()),
            n => Ok(Head {
                n: number(n, "head n")?,
                check: Check(text(items.get(1), "head c")?),
            }),
        }
    }
}

fn damaged(what: &str, v: &impl std::fmt::Debug) -> LogError {
    LogError::Damaged(format!("{what}: unexpected reply {v:?}"))
}

/// A reply's items.
pub(crate) fn array(v: Value, what: &str) -> Result<Vec<Value>, LogError> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(damaged(what, &other)),
    }
}

/// A reply item as text.
pub(crate) fn text(v: Option<&Value>, what: &str) -> Result<String, LogError> {
    match v {
        Some(Value::BulkString(b)) => String::from_utf8(b.clone()).map_err(|_| damaged(what, b)),
        Some(Value::SimpleString(s)) => Ok(s.clone()),
        Some(Value::Int(i)) => Ok(i.to_string()),
        other => Err(damaged(what, &other)),
    }
}

/// A reply item as a non-negative number (an integer or its decimal text).
pub(crate) fn number(v: Option<&Value>, what: &str) -> Result<u64, LogError> {
    match v {
        Some(Value::Int(i)) => u64::try_from(*i).map_err(|_| damaged(what, i)),
        other => text(other, what)?
            .parse()
            .map_err(|_| damaged(what, &other)),
    }
}

/// The entries of an `XRANGE` reply: `[[id, [field, value, …]], …]`.
fn entries(v: Value) -> Result<Vec<Entry>, LogError> {
    let mut out = Vec::new();
    for item in array(v, "entries")? {
        let mut parts = array(item, "entry")?.into_iter();
        let id = text(parts.next().as_ref(), "entry id")?;
        let n = id
            .strip_prefix("0-")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| damaged("entry id", &id))?;
        let fields = array(parts.next().unwrap_or(Value::Nil), "entry fields")?;
        let (mut payload, mut check) = (None, None);
        let mut it = fields.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            match (text(Some(&k), "field")?.as_str(), v) {
                ("p", Value::BulkString(b)) => payload = Some(b),
                ("c", v) => check = Some(Check(text(Some(&v), "check")?)),
                (other, v) => return Err(damaged(&format!("entry {n} field {other}"), &v)),
            }
        }
        match (payload, check) {
            (Some(payload), Some(check)) => out.push(Entry { n, check, payload }),
            _ => return Err(LogError::Damaged(format!("entry {n} lacks p or c"))),
        }
    }
    Ok(out)
}

/// The append's refusal, if its reply (`items`) is one: nothing was appended then.
fn refused(
    items: &[Value],
    stamp_us: i64,
    offset_us: i64,
    skew: Option<SkewBound>,
) -> Result<(), LogError> {
    Err(match text(items.first(), "append status")?.as_str() {
        "ok" => return Ok(()),
        "skew" => LogError::Skew {
            stamp_us,
            offset_us,
            redis_us: i64::try_from(number(items.get(1), "redis time")?).unwrap_or(i64::MAX),
            max_skew_us: skew.map_or(0, |s| s.max_us),
        },
        "diverged" => LogError::Diverged,
        "newer" => LogError::Newer {
            found: u32::try_from(number(items.get(1), "newer format")?).unwrap_or(u32::MAX),
        },
        "import_gone" => LogError::ImportGone(text(items.get(1), "import")?),
        other => LogError::Damaged(format!("append answered {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_takes_only_the_next_chained_entry() {
        let first = Check::default().next(b"a");
        let second = first.next(b"b");
        let mut t = Tail::default();
        let e1 = Entry {
            n: 1,
            check: first.clone(),
            payload: b"a".to_vec(),
        };
        t.take(&e1).expect("first");
        let gap = Entry {
            n: 3,
            check: second.clone(),
            payload: b"b".to_vec(),
        };
        assert_eq!(t.take(&gap), Err(Divergence::Gap { after: 1, found: 3 }));
        let rewritten = Entry {
            n: 2,
            check: second.clone(),
            payload: b"x".to_vec(),
        };
        assert_eq!(t.take(&rewritten), Err(Divergence::Mismatch { n: 2 }));
        let e2 = Entry {
            n: 2,
            check: second.clone(),
            payload: b"b".to_vec(),
        };
        t.take(&e2).expect("second");
        assert_eq!(t.n, 2);
        let behind = Head { n: 1, check: first };
        assert!(t.follows(&behind).is_err());
        let rewritten_head = Head {
            n: 2,
            check: Check("0000000000000000".into()),
        };
        assert!(t.follows(&rewritten_head).is_err());
        assert!(t
            .follows(&Head {
                n: 2,
                check: second
            })
            .is_ok());
    }

    #[test]
    fn the_check_is_sixteen_hex_digits_of_sha1() {
        // sha1("") = da39a3ee5e6b4b0d3255bfef95601890afd80709
        assert_eq!(Check::default().next(b"").0, "da39a3ee5e6b4b0d");
        // sha1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d, fed in two parts.
        assert_eq!(Check("a".into()).next(b"bc").0, "a9993e364706816a");
        assert_eq!(
            LogKeys::new("pf", "b").chunk_prefix(7, 42),
            "pf:{b}:snap:7.42:"
        );
    }
}
