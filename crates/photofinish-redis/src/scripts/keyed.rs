//! The keys and arguments of `keyed.lua`, named, in the order the script reads them.

/// What a keyed call does (the script's MODE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One write.
    Write,
    /// Writes in order, each on its own.
    Batch,
    /// Removing a member.
    Remove,
    /// Creating a board.
    Create,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Write => "write",
            Mode::Batch => "batch",
            Mode::Remove => "remove",
            Mode::Create => "create",
        }
    }
}

/// One entry: the keys and arguments of its script (`WriteCall`, `PeriodTarget` + member,
/// or the create's), or a refusal the server made before the call (code and message).
#[derive(Debug, Clone)]
pub enum Entry {
    /// Run with these keys and arguments.
    Run {
        /// KEYS.
        keys: Vec<String>,
        /// ARGV.
        args: Vec<Vec<u8>>,
    },
    /// Refused before the call.
    Refused {
        /// The error code.
        code: &'static str,
        /// The message.
        message: String,
    },
}

/// One call of the keyed script. See `keyed.lua`.
#[derive(Debug, Clone)]
pub struct KeyedCall {
    /// The key's record.
    pub record_key: String,
    /// The request's fingerprint, hex.
    pub fingerprint: String,
    /// How long the record is kept, ms.
    pub ttl_ms: i64,
    /// What it does.
    pub mode: Mode,
    /// Its entries.
    pub entries: Vec<Entry>,
}

impl KeyedCall {
    /// KEYS: the record, then each entry's keys; ARGV: FP TTL_MS MODE N, then per entry
    /// NKEYS NARGS ARGS….
    pub fn invocation(&self) -> super::Call {
        let mut inv = super::KEYED.prepare_invoke();
        inv.key(&self.record_key);
        inv.arg(&self.fingerprint)
            .arg(self.ttl_ms.max(1))
            .arg(self.mode.as_str())
            .arg(self.entries.len());
        for e in &self.entries {
            match e {
                Entry::Run { keys, args } => {
                    inv.arg(keys.len()).arg(args.len());
                    for k in keys {
                        inv.key(k);
                    }
                    for a in args {
                        inv.arg(a);
                    }
                }
                Entry::Refused { code, message } => {
                    inv.arg(0).arg(2).arg(*code).arg(message);
                }
            }
        }
        inv
    }
}
