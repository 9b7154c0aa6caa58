//! The table of every RESP command (docs/SPEC.md §9): each family's rows, joined —
//! what a command name is looked up in and what `COMMAND [COUNT|INFO|DOCS|LIST]` lists,
//! in Redis 7's shape. `COMMAND` is this file's own family ([`Family::Table`]), so the
//! families' files never import the table that lists them.

use super::args::upper;
use super::spec::{Family, Spec};
use super::{board, connection, member, query, read, teams, write};
use crate::resp::error::CmdError;
use crate::resp::frame::Args;
use crate::resp::session::Session;

/// This file's own row: `COMMAND`.
pub const COMMANDS: &[Spec] = &[Spec::new(
    "command",
    -1,
    &["loading", "stale"],
    0,
    Family::Table,
)];

/// Every family's rows, in the order `COMMAND` lists them.
const FAMILIES: [&[Spec]; 8] = [
    board::COMMANDS,
    write::COMMANDS,
    read::COMMANDS,
    teams::COMMANDS,
    query::COMMANDS,
    member::COMMANDS,
    connection::COMMANDS,
    COMMANDS,
];

/// Every command.
pub fn all() -> impl Iterator<Item = &'static Spec> {
    FAMILIES.into_iter().flatten()
}

/// The command named `name` (any case).
pub fn lookup(name: &[u8]) -> Option<&'static Spec> {
    all().find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

/// One command's `COMMAND INFO` entry, as Redis 7 shapes it: name, arity, flags, first
/// key, last key, step, ACL categories, tips, key specs, subcommands.
fn info(s: &mut Session, spec: &Spec) {
    s.out.array(10);
    s.out.bulk(spec.name.as_bytes());
    s.out.int(spec.arity);
    s.out.array(spec.flags.len());
    for f in spec.flags {
        s.out.simple(f);
    }
    s.out.int(spec.key);
    s.out.int(spec.key);
    s.out.int(i64::from(spec.key > 0));
    for _ in 0..4 {
        s.out.array(0);
    }
}

/// Runs `COMMAND [COUNT|INFO name…|DOCS|LIST]`.
pub fn run(s: &mut Session, args: &Args<'_>) -> Result<(), CmdError> {
    let count = all().count();
    if args.len() == 1 {
        s.out.array(count);
        for spec in all() {
            info(s, spec);
        }
        return Ok(());
    }
    match upper(args.get(1)).as_str() {
        "COUNT" => s.out.count(count as u64),
        "LIST" => {
            s.out.array(count);
            for spec in all() {
                s.out.bulk(spec.name.as_bytes());
            }
        }
        "INFO" => {
            s.out.array(args.len() - 2);
            for i in 2..args.len() {
                match lookup(args.get(i)) {
                    Some(spec) => info(s, spec),
                    None => s.out.nil(),
                }
            }
        }
        // No documentation through the protocol: an empty map, which redis-cli accepts.
        "DOCS" => s.out.map(0),
        _ => {
            return Err(CmdError::Raw(format!(
                "ERR unknown subcommand '{}'. Try COMMAND COUNT, LIST, INFO, DOCS.",
                String::from_utf8_lossy(args.get(1))
            )))
        }
    }
    Ok(())
}
