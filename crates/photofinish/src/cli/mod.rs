//! Command-line flags (clap) and what each subcommand does with them.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::client::Client;

mod commands;
pub mod config;
mod flags;
mod serve;

use commands::BoardCommand;

/// Photofinish: leaderboards ranked by score, ties broken by who got there first.
#[derive(Debug, Parser)]
#[command(version, about)]
pub struct Args {
    /// Server URL for client commands.
    #[arg(
        long,
        global = true,
        env = "PHOTOFINISH_SERVER",
        default_value = "http://127.0.0.1:7770"
    )]
    server: String,
    /// Credential for client commands: an API key (`pf_…`) or a player's token.
    #[arg(long, global = true, env = "PHOTOFINISH_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print the server's JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server: on the embedded store by default, or on Redis with --storage.
    Serve(serve::ServeArgs),
    /// Print what `serve` would run with these flags, environment and --config file:
    /// each setting and where it came from, secrets redacted (docs/SPEC.md §18).
    Config(serve::ServeArgs),
    /// Move a Redis namespace to the format this release writes, in place
    /// (docs/redis-layout.md, "Upgrade" and "Versions"): from the Lua data model (format
    /// 2), converted to the log layout — stop every server on it first; an interrupted run
    /// is resumed by running it again. A namespace at this release's format is left alone.
    #[command(name = "upgrade", alias = "redis-upgrade")]
    RedisUpgrade {
        /// redis://host:port[/db] or redis+cluster://host:port[,host:port...].
        #[arg(long, env = "PHOTOFINISH_STORAGE")]
        storage: String,
        /// Prefix of every Redis key.
        #[arg(long, env = "PHOTOFINISH_REDIS_NAMESPACE", default_value = "pf")]
        redis_namespace: String,
    },
    /// Download a consistent backup of every board from a running server on the embedded
    /// store (admin key for every board), made while writes go on; checked before it is
    /// kept.
    Backup {
        /// The backup file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Make a data directory from a backup (checked whole first); DIR must be empty or
    /// missing. Then `photofinish serve --data-dir DIR` answers as the server did when the
    /// backup was made.
    Restore {
        /// The backup file.
        file: PathBuf,
        /// The data directory to make.
        #[arg(long)]
        data_dir: PathBuf,
        /// The erasure ledger to apply again (docs/privacy.md): every member erased since
        /// the backup was made leaves the restored data, and the count of rows dropped is
        /// reported.
        #[arg(long)]
        erasure_ledger: Option<PathBuf>,
        /// The erasure key the ledger was written under (the old data dir's `erasure.key`,
        /// or the server's --erasure-key-file); copied into the new data dir.
        #[arg(long)]
        erasure_key_file: Option<PathBuf>,
    },
    /// Write one period of a board as JSON Lines in rank order (docs/SPEC.md §11).
    Export {
        /// Board name.
        #[arg(long)]
        board: String,
        /// current (default), previous or a period id.
        #[arg(long)]
        period: Option<String>,
        /// The file to write (written whole, then named); stdout when absent.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Fill an empty period of an existing board from JSON Lines (admin): all or nothing.
    Import {
        /// Board name (create it first, with the config you want).
        #[arg(long)]
        board: String,
        /// current (default), previous or a retained period id.
        #[arg(long)]
        period: Option<String>,
        /// The JSON Lines file (an export's format).
        file: PathBuf,
    },
    /// Import an existing Redis ZSET, decoding the score packing it uses (docs/migrate.md).
    ImportRedis {
        /// The Redis holding the ZSET: redis://host:port[/db].
        #[arg(long)]
        redis: String,
        /// The ZSET's key.
        #[arg(long)]
        key: String,
        /// Board name (create it first).
        #[arg(long)]
        board: String,
        /// current (default), previous or a retained period id.
        #[arg(long)]
        period: Option<String>,
        #[command(flatten)]
        packing: Box<crate::packing::PackingFlags>,
    },
    /// Manage API keys in a keys file (the server re-reads it on SIGHUP).
    Key {
        #[command(subcommand)]
        command: crate::keys_cmd::KeyCommand,
    },
    /// Create, list, show or delete boards.
    Board {
        #[command(subcommand)]
        command: BoardCommand,
    },
    /// Submit a score.
    Submit(commands::SubmitArgs),
    /// Show the top of a board.
    Top(commands::TopArgs),
    /// Show a member's rank.
    Rank(commands::RankArgs),
    /// Show the rows around a member.
    Around(commands::AroundArgs),
    /// Show a period's partitions, each with its members.
    Partitions(commands::PartitionsArgs),
    /// Show a board's teams, or one team with its members.
    Teams(commands::TeamsArgs),
}

/// Most request threads `serve --workers` takes.
pub const MAX_WORKERS: i64 = 1024;

impl Args {
    /// The request threads `serve --workers` asks for; `None`: one per core (and for the
    /// client commands, which need few).
    pub fn workers(&self) -> Option<usize> {
        match &self.command {
            Command::Serve(a) => a.workers.map(usize::from),
            _ => None,
        }
    }
}

/// `serve`'s settings, checked across flags (a delay past the grace, a Redis setting
/// without Redis, an empty webhook secret): a refusal is a [`config::ConfigError`] (exit
/// 2, as a bad flag is; a supervisor does not restart it), naming the config file when one
/// was read.
fn refused_unless_valid(
    a: serve::ServeArgs,
    sources: &config::Sources,
) -> Result<(photofinish_server::serve::ServeOptions, bool)> {
    a.options().map_err(|e| {
        let with = sources.file.as_ref().map_or_else(String::new, |f| {
            format!(" (settings from config file {})", f.display())
        });
        anyhow::Error::new(config::ConfigError(format!("{e:#}{with}")))
    })
}

/// Runs the parsed command line; `sources` says where `serve`'s settings came from.
pub async fn run(args: Args, sources: config::Sources) -> Result<()> {
    let client = Client::new(&args.server, args.token.as_deref())?;
    let json = args.json;
    match args.command {
        Command::Serve(a) => serve::serve(refused_unless_valid(a, &sources)?).await,
        Command::Config(a) => {
            // Checked as `serve` would check them: what prints is what would run.
            refused_unless_valid(a, &sources)?;
            let cmd = <Args as clap::CommandFactory>::command();
            let serve = cmd
                .find_subcommand("serve")
                .ok_or_else(|| anyhow::anyhow!("no serve subcommand"))?;
            let mut out = std::io::stdout().lock();
            std::io::Write::write_all(&mut out, config::render(serve, &sources).as_bytes())?;
            Ok(())
        }
        Command::RedisUpgrade {
            storage,
            redis_namespace,
        } => commands::redis_upgrade(&storage, &redis_namespace, json).await,
        Command::Key { command } => crate::keys_cmd::run(command, json),
        Command::Backup { out } => commands::backup(&client, &out, json).await,
        Command::Export { board, period, out } => {
            crate::transfer_cmd::export(&client, &board, period, out, json).await
        }
        Command::Import {
            board,
            period,
            file,
        } => crate::transfer_cmd::import(&client, &board, period, &file, json).await,
        Command::ImportRedis {
            redis,
            key,
            board,
            period,
            packing,
        } => {
            let encoding = packing.encoding()?;
            crate::transfer_cmd::import_redis(&client, &redis, &key, &board, period, encoding, json)
                .await
        }
        Command::Restore {
            file,
            data_dir,
            erasure_ledger,
            erasure_key_file,
        } => {
            let ledger = erasure_ledger
                .as_deref()
                .map(|l| (l, erasure_key_file.as_deref()));
            commands::restore(&file, &data_dir, ledger, json).await
        }
        Command::Board { command } => commands::board(&client, json, command).await,
        Command::Submit(a) => commands::submit(&client, json, a).await,
        Command::Top(a) => commands::top(&client, json, a).await,
        Command::Rank(a) => commands::rank(&client, json, a).await,
        Command::Around(a) => commands::around(&client, json, a).await,
        Command::Partitions(a) => commands::partitions(&client, json, a).await,
        Command::Teams(a) => commands::teams(&client, json, a).await,
    }
}
