//! `photofinish key new|list|revoke`: API keys in a keys file (docs/SPEC.md §6). `new`
//! prints the secret alone on stdout, once; the file keeps only its hash. A running server
//! takes the change on SIGHUP.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Subcommand;
use photofinish_core::access::Scope;
use photofinish_server::auth::keys;
use serde_json::json;

use crate::table;

/// The key subcommands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Make a key: prints its secret (once) and stores its hash in the file.
    New {
        /// The keys file (created when missing).
        #[arg(long, env = "PHOTOFINISH_KEYS")]
        keys: PathBuf,
        /// A unique name for the key.
        #[arg(long)]
        name: String,
        /// read, write, admin or metrics.
        #[arg(long)]
        scope: String,
        /// Boards the key covers, as globs (`season-*`); repeatable; default `*`.
        #[arg(long = "board")]
        boards: Vec<String>,
        /// Rate limit: N/s or N/min.
        #[arg(long)]
        rate: Option<String>,
    },
    /// List the keys (never their secrets).
    List {
        /// The keys file.
        #[arg(long, env = "PHOTOFINISH_KEYS")]
        keys: PathBuf,
    },
    /// Remove a key; a server stops taking it at its next SIGHUP.
    Revoke {
        /// The keys file.
        #[arg(long, env = "PHOTOFINISH_KEYS")]
        keys: PathBuf,
        /// The key's name.
        name: String,
    },
}

/// Runs a key subcommand.
pub fn run(command: KeyCommand, json: bool) -> Result<()> {
    match command {
        KeyCommand::New {
            keys: path,
            name,
            scope,
            boards,
            rate,
        } => {
            let scope = Scope::parse(&scope).ok_or_else(|| {
                anyhow!("--scope must be read, write, admin or metrics, got {scope:?}")
            })?;
            let mut stored = keys::read_file(&path, true)?;
            if stored.iter().any(|k| k.name == name) {
                return Err(anyhow!(
                    "a key named {name:?} is already in {}",
                    path.display()
                ));
            }
            let created_at = jiff::Timestamp::now().to_string();
            let (key, secret) =
                keys::new_key(&name, scope, boards, rate, created_at).map_err(|e| anyhow!(e))?;
            stored.push(key);
            keys::write_file(&path, stored)?;
            println!("{}", secret.expose());
            Ok(())
        }
        KeyCommand::List { keys: path } => {
            let stored = keys::read_file(&path, false)?;
            let v = json!({"keys": stored.iter().map(|k| json!({
                "name": k.name,
                "scope": k.scope.as_str(),
                "boards": k.boards,
                "rate": k.rate,
                "created_at": k.created_at,
            })).collect::<Vec<_>>()});
            table::print(json, &v, table::keys)
        }
        KeyCommand::Revoke { keys: path, name } => {
            keys::update(&path, |stored| {
                let before = stored.len();
                stored.retain(|k| k.name != name);
                if stored.len() == before {
                    return Err(format!("no key named {name:?}"));
                }
                Ok(())
            })?;
            eprintln!(
                "revoked {name:?}; send SIGHUP to running servers (kill -HUP <pid>) to apply"
            );
            Ok(())
        }
    }
}
