//! The `photofinish` binary: `serve` runs the server; the other subcommands are a client
//! for a running server. Raw flags are parsed here (clap) and turned into settings in
//! [`cli`]; the client lives in [`client`] and prints through [`table`].

mod cli;
mod client;
mod table;

use clap::Parser;

/// mimalloc instead of glibc malloc: the server allocates per request (bodies, JSON,
/// answers) from many threads; see docs/BENCHMARKS.md for the measured difference.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = cli::Args::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
