//! The connection commands, enough of them that `redis-cli`, redis-rs and redis-py work
//! unchanged: `AUTH [user] token` and `HELLO [2|3] [AUTH user token] [SETNAME name]`
//! (any user name; the token is an API key or a player token, docs/SPEC.md §6), `PING`,
//! `ECHO`, `SELECT 0`, `QUIT`, `RESET`, `CLIENT SETNAME|GETNAME|SETINFO|ID|INFO|NO-EVICT|
//! NO-TOUCH`, `INFO [section …]` (`COMMAND` is the table's own, [`super::table`]) (what client libraries
//! read on connect: ioredis' ready check waits on `loading:0`).

use super::args::upper;
use super::spec::{Family, Spec};
use crate::resp::error::{wrong_arity, CmdError};
use crate::resp::frame::Args;
use crate::resp::reply::Proto;
use crate::resp::session::Session;

/// The flags of a command a client sends before it is authenticated, as Redis lists them.
const BEFORE_AUTH: &[&str] = &["noscript", "loading", "stale", "fast", "no_auth"];

/// This family's rows.
pub const COMMANDS: &[Spec] = &[
    Spec::new("auth", -2, BEFORE_AUTH, 0, Family::Connection),
    Spec::new("hello", -1, BEFORE_AUTH, 0, Family::Connection),
    Spec::new("ping", -1, &["fast"], 0, Family::Connection),
    Spec::new("echo", 2, &["fast"], 0, Family::Connection),
    Spec::new(
        "select",
        2,
        &["loading", "stale", "fast"],
        0,
        Family::Connection,
    ),
    Spec::new("quit", -1, BEFORE_AUTH, 0, Family::Connection),
    Spec::new("reset", 1, BEFORE_AUTH, 0, Family::Connection),
    Spec::new("client", -2, &["loading", "stale"], 0, Family::Connection),
    Spec::new("info", -1, &["loading", "stale"], 0, Family::Connection),
];

/// Runs a connection command.
pub async fn run(s: &mut Session, spec: &Spec, args: &Args<'_>) -> Result<(), CmdError> {
    match spec.name {
        "auth" => {
            let token = match args.len() {
                2 => args.get(1),
                3 => args.get(2),
                _ => return Err(wrong_arity(spec.name)),
            };
            s.authenticate(token)?;
            s.out.ok();
        }
        "hello" => hello(s, args)?,
        "ping" => match args.len() {
            1 => s.out.simple("PONG"),
            2 => s.out.bulk(args.get(1)),
            _ => return Err(wrong_arity(spec.name)),
        },
        "echo" => s.out.bulk(args.get(1)),
        "select" => {
            if args.get(1) != b"0" {
                return Err(CmdError::Raw("ERR DB index is out of range".into()));
            }
            s.out.ok();
        }
        "quit" => {
            s.quit = true;
            s.out.ok();
        }
        "reset" => {
            s.reset();
            s.out.simple("RESET");
        }
        "client" => client(s, args)?,
        "info" => server_info(s, args),
        other => unreachable!("{other} is not a connection command"),
    }
    Ok(())
}

fn hello(s: &mut Session, args: &Args<'_>) -> Result<(), CmdError> {
    let mut proto = s.out.proto;
    let mut i = 1;
    if args.len() > 1 {
        proto = match args.get(1) {
            b"2" => Proto::Resp2,
            b"3" => Proto::Resp3,
            _ => return Err(CmdError::Raw("NOPROTO unsupported protocol version".into())),
        };
        i = 2;
    }
    let mut token = None;
    let mut name = None;
    while i < args.len() {
        let word = upper(args.get(i));
        match word.as_str() {
            "AUTH" if i + 2 < args.len() => {
                token = Some(args.get(i + 2));
                i += 3;
            }
            "SETNAME" if i + 1 < args.len() => {
                name = Some(args.get(i + 1));
                i += 2;
            }
            _ => {
                return Err(CmdError::Raw(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(args.get(i))
                )))
            }
        }
    }
    if let Some(t) = token {
        s.authenticate(t)?;
    }
    if let Some(n) = name {
        s.name = Some(String::from_utf8_lossy(n).into_owned());
    }
    s.out.proto = proto;
    s.out.map(7);
    s.out.bulk(b"server");
    s.out.bulk(b"photofinish");
    s.out.bulk(b"version");
    s.out.bulk(env!("CARGO_PKG_VERSION").as_bytes());
    s.out.bulk(b"proto");
    s.out.int(if proto == Proto::Resp3 { 3 } else { 2 });
    s.out.bulk(b"id");
    s.out.count(s.id);
    s.out.bulk(b"mode");
    s.out.bulk(b"standalone");
    s.out.bulk(b"role");
    s.out.bulk(b"master");
    s.out.bulk(b"modules");
    s.out.array(0);
    Ok(())
}

fn client(s: &mut Session, args: &Args<'_>) -> Result<(), CmdError> {
    let sub = upper(args.get(1));
    match (sub.as_str(), args.len()) {
        ("SETNAME", 3) => {
            s.name = Some(String::from_utf8_lossy(args.get(2)).into_owned());
            s.out.ok();
        }
        ("GETNAME", 2) => match &s.name {
            Some(n) => s.out.bulk(n.as_bytes()),
            None => s.out.nil(),
        },
        ("SETINFO", 4) | ("NO-EVICT", 3) | ("NO-TOUCH", 3) => s.out.ok(),
        ("ID", 2) => s.out.count(s.id),
        ("INFO", 2) => {
            let line = format!(
                "id={} addr={} name={} resp={}\n",
                s.id,
                s.peer,
                s.name.as_deref().unwrap_or(""),
                if s.out.proto == Proto::Resp3 { 3 } else { 2 }
            );
            s.out.bulk(line.as_bytes());
        }
        ("SETNAME" | "GETNAME" | "SETINFO" | "ID" | "INFO" | "NO-EVICT" | "NO-TOUCH", _) => {
            return Err(wrong_arity(&format!("client|{}", sub.to_ascii_lowercase())))
        }
        _ => {
            return Err(CmdError::Raw(format!(
                "ERR unknown subcommand '{}'. Try CLIENT SETNAME, GETNAME, SETINFO, ID, INFO.",
                String::from_utf8_lossy(args.get(1))
            )))
        }
    }
    Ok(())
}

/// The sections `INFO` knows, each with its `key:value` lines, in Redis's order. The
/// version is the Redis release whose commands the door answers as Redis does (`HELLO 3`,
/// `CLIENT SETINFO`, `COMMAND` in Redis 7's shape): clients gate features on it.
const INFO_SECTIONS: &[(&str, &[(&str, &str)])] = &[
    (
        "server",
        &[
            ("redis_version", "7.2.0"),
            ("photofinish_version", env!("CARGO_PKG_VERSION")),
            ("redis_mode", "standalone"),
            ("arch_bits", "64"),
        ],
    ),
    ("persistence", &[("loading", "0"), ("async_loading", "0")]),
    (
        "replication",
        &[("role", "master"), ("connected_slaves", "0")],
    ),
    ("keyspace", &[]),
];

/// `INFO [section …]`: the named sections (`default`, `all`, `everything` or none: every
/// one), as Redis lays them out; a section it does not know adds nothing, as in Redis.
fn server_info(s: &mut Session, args: &Args<'_>) {
    let wanted: Vec<String> = (1..args.len())
        .map(|i| upper(args.get(i)).to_ascii_lowercase())
        .collect();
    let every = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| matches!(w.as_str(), "default" | "all" | "everything"));
    let mut text = String::new();
    for (name, lines) in INFO_SECTIONS {
        if !every && !wanted.iter().any(|w| w == name) {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        let mut title = name.to_string();
        title[..1].make_ascii_uppercase();
        text.push_str(&format!("# {title}\r\n"));
        for (k, v) in *lines {
            text.push_str(&format!("{k}:{v}\r\n"));
        }
        if *name == "server" {
            text.push_str(&format!("process_id:{}\r\n", std::process::id()));
        }
    }
    s.out.verbatim(text.as_bytes());
}
