//! The config file (docs/SPEC.md §18): `serve --config FILE` reads a TOML file whose keys
//! are `serve`'s flags, and `photofinish config` prints what `serve` would run with.
//!
//! The file sits between the environment and the defaults: the command line is parsed
//! once, and each key of the file whose flag neither the command line nor the environment
//! set is added to it as that flag (each value checked by the flag's own parser first, so
//! a bad one is refused naming the key and the file), then the line is parsed again —
//! clap's rules, flag > environment > default, then hold with the file in its place. A
//! key is a flag's long name (`data-dir`; `data_dir` is the same key). Every way the file
//! can be wrong exits 2, as a bad flag does ([`ConfigError`]).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches};

use super::Args;

/// The subcommands that take `serve`'s flags, and so `--config`.
const WITH_CONFIG: [&str; 2] = ["serve", "config"];

/// A config file that cannot be used: the process exits 2, as for a bad flag.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Where the settings of a `serve` or `config` command line came from: the file, when one
/// was read, and the flags it set.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// The config file read.
    pub file: Option<PathBuf>,
    /// Ids of the flags the file set.
    pub from_file: BTreeSet<String>,
    /// The `serve`/`config` subcommand's matches, for `photofinish config` to print.
    pub matches: Option<ArgMatches>,
}

/// Parses the process's command line with its config file, if it names one. A usage
/// error exits as clap's do (status 2); a bad file is a [`ConfigError`].
pub fn load(argv: Vec<OsString>) -> Result<(Args, Sources), ConfigError> {
    let cmd = Args::command();
    // Leniently first: a flag the command line gives may require one the file gives
    // (`--tls-cert` here, `tls-key` there); the parse with the file's flags checks all.
    let first = cmd
        .clone()
        .ignore_errors(true)
        .try_get_matches_from(&argv)
        .unwrap_or_else(|e| e.exit());
    let mut sources = Sources::default();
    let mut full = argv;
    if let Some((name, sub)) = first.subcommand().filter(|(n, _)| WITH_CONFIG.contains(n)) {
        if let Some(path) = sub.get_one::<PathBuf>("config") {
            let sub_cmd = cmd
                .find_subcommand(name)
                .ok_or_else(|| ConfigError(format!("no subcommand {name}")))?;
            let (extra, ids) = file_flags(path, sub_cmd, sub)?;
            full.extend(extra);
            sources.file = Some(path.clone());
            sources.from_file = ids;
        }
    }
    let matches = cmd.try_get_matches_from(&full).unwrap_or_else(|e| e.exit());
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    sources.matches = matches
        .subcommand()
        .filter(|(n, _)| WITH_CONFIG.contains(n))
        .map(|(_, m)| m.clone());
    Ok((args, sources))
}

/// The flags config file `path` adds to a command line whose matches are `given`, and the
/// ids of the flags they set.
fn file_flags(
    path: &Path,
    cmd: &clap::Command,
    given: &ArgMatches,
) -> Result<(Vec<OsString>, BTreeSet<String>), ConfigError> {
    let refuse = |what: String| ConfigError(format!("config file {}: {what}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    let table: toml::Table = text.parse().map_err(|e| refuse(format!("{e}")))?;
    let explicit = |id: &str| {
        matches!(
            given.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    };
    let mut extra = Vec::new();
    let mut ids = BTreeSet::new();
    for (key, value) in &table {
        let id = key.replace('-', "_");
        let arg = keys(cmd)
            .find(|a| a.get_id().as_str() == id)
            .ok_or_else(|| refuse(format!("unknown key `{key}` (keys are serve's flags)")))?;
        if !ids.insert(id.clone()) {
            return Err(refuse(format!("key `{key}` is given twice")));
        }
        // Given on the command line or in the environment, or excluded by a flag given
        // there (conflicts are declared on one side: both are asked).
        let overridden = explicit(&id)
            || cmd
                .get_arg_conflicts_with(arg)
                .iter()
                .any(|c| explicit(c.get_id().as_str()))
            || keys(cmd).any(|other| {
                explicit(other.get_id().as_str())
                    && cmd
                        .get_arg_conflicts_with(other)
                        .iter()
                        .any(|c| c.get_id() == arg.get_id())
            });
        if overridden {
            ids.remove(&id);
            continue;
        }
        let long = arg.get_long().unwrap_or(key);
        if matches!(arg.get_action(), ArgAction::SetTrue) {
            match value {
                toml::Value::Boolean(true) => extra.push(format!("--{long}").into()),
                toml::Value::Boolean(false) => {}
                _ => return Err(refuse(format!("key `{key}` takes true or false"))),
            }
            continue;
        }
        let text = scalar(value).ok_or_else(|| {
            refuse(format!(
                "key `{key}` takes a string or a number, got {value}"
            ))
        })?;
        check(arg, &text)
            .map_err(|e| refuse(format!("key `{key}`: {}", first_line(&e.to_string()))))?;
        extra.push(format!("--{long}={text}").into());
    }
    Ok((extra, ids))
}

/// Whether `text` is a value flag `arg` takes: its own parser, alone in a command of its
/// own (so the file's value is judged before it meets the other flags).
fn check(arg: &clap::Arg, text: &str) -> Result<(), clap::Error> {
    let alone = clap::Arg::new(arg.get_id().clone())
        .allow_hyphen_values(true)
        .value_parser(arg.get_value_parser().clone());
    clap::Command::new("photofinish")
        .arg(alone)
        .try_get_matches_from(["photofinish", text])
        .map(drop)
}

/// The flags a config file may set: every long flag of the subcommand, but `--config`
/// itself and the global client flags.
pub fn keys(cmd: &clap::Command) -> impl Iterator<Item = &clap::Arg> {
    cmd.get_arguments().filter(|a| {
        a.get_long().is_some()
            && !a.is_global_set()
            && !matches!(a.get_action(), ArgAction::Help | ArgAction::Version)
            && a.get_id() != "config"
    })
}

/// A TOML value as a flag's text: strings as they are, numbers written out.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// A clap error about one value, on one line: its lines but the usage hint (about flags,
/// not keys), the value's own name left out.
fn first_line(e: &str) -> String {
    let e = e
        .trim_start_matches("error: ")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage") && !l.starts_with("For more"))
        .collect::<Vec<_>>()
        .join(" ");
    match (e.find(" for '["), e.find("]'")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &e[..a], &e[b + 2..]),
        _ => e,
    }
}

/// The flags whose value is a secret: shown only as `<redacted>` with its source.
const SECRETS: [&str; 1] = ["webhook_secret"];

/// What `photofinish config` prints: each of `serve`'s settings as a TOML line — the
/// file's format, so the output can be kept as a config file — with where its value came
/// from; a secret as `<redacted>`, the Redis URL without its password, files by name.
pub fn render(cmd: &clap::Command, sources: &Sources) -> String {
    let mut out = String::from(
        "# What `photofinish serve` would run with: each setting, then where it came from\n\
         # (flag, env, file or default). Secrets are redacted; files are named, not read.\n",
    );
    let Some(m) = &sources.matches else {
        return out;
    };
    for arg in keys(cmd) {
        let id = arg.get_id().as_str();
        let key = arg.get_long().unwrap_or(id);
        let source = match m.value_source(id) {
            Some(ValueSource::CommandLine) if sources.from_file.contains(id) => {
                let file = sources.file.as_deref().unwrap_or(Path::new("?"));
                format!("file {}", file.display())
            }
            Some(ValueSource::CommandLine) => "flag".to_owned(),
            Some(ValueSource::EnvVariable) => arg.get_env().map_or_else(
                || "env".to_owned(),
                |e| format!("env {}", e.to_string_lossy()),
            ),
            Some(ValueSource::DefaultValue) => "default".to_owned(),
            _ => {
                out += &format!("# {key}: not set\n");
                continue;
            }
        };
        let value = if matches!(arg.get_action(), ArgAction::SetTrue) {
            m.get_flag(id).to_string()
        } else {
            let raw = m
                .get_raw(id)
                .and_then(|mut v| v.next())
                .map(|v| v.to_string_lossy().into_owned())
                .unwrap_or_default();
            let shown = if SECRETS.contains(&id) {
                "<redacted>".to_owned()
            } else if id == "storage" {
                photofinish_server::serve::redact_url(&raw)
            } else {
                raw
            };
            toml::Value::String(shown).to_string()
        };
        out += &format!("{key} = {value}  # {source}\n");
    }
    out
}
