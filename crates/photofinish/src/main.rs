//! The `photofinish` binary: `serve` runs the server; the other subcommands are a client
//! for a running server. Raw flags are parsed here (clap) and turned into settings in
//! [`cli`]; the client lives in [`client`] and prints through [`table`].

mod cli;
mod client;
mod keys_cmd;
mod packing;
mod table;
mod transfer_cmd;

use std::io::Write;

/// mimalloc instead of glibc malloc: the server allocates per request (bodies, JSON,
/// answers) from many threads; see docs/bench-history.md §2 for the measured difference.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process. mimalloc asks the kernel for them
/// (`MADV_HUGEPAGE`), and every first touch of such a page zeroes 2 MiB: the snapshotter,
/// which builds and drops a whole private state per compaction, spent more CPU zeroing
/// pages than replaying the log, while the ranking's random reads gained nothing
/// measurable from the bigger pages (docs/bench-history.md §2 and §1).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn disable_transparent_huge_pages() {
    // SAFETY: prctl(PR_SET_THP_DISABLE) takes plain integers and touches no memory of
    // ours; it sets a flag on this process that later page faults consult. Failing (an
    // old kernel) only leaves the default, so the result is ignored.
    let _ = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

#[cfg(not(target_os = "linux"))]
fn disable_transparent_huge_pages() {}

/// Writes `error: <what>` to stderr. Not `eprintln!`: it panics when stderr is closed,
/// turning the exit status into a panic's.
fn report(what: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "error: {what}");
}

fn main() -> std::process::ExitCode {
    disable_transparent_huge_pages();
    let (args, sources) = match cli::config::load(std::env::args_os().collect()) {
        Ok(loaded) => loaded,
        Err(e) => {
            report(format_args!("{e}"));
            return std::process::ExitCode::from(2);
        }
    };
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.workers() {
        builder.worker_threads(n);
    }
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            report(format_args!("cannot start the async runtime: {e}"));
            return std::process::ExitCode::FAILURE;
        }
    };
    let ran = runtime.block_on(cli::run(args, sources));
    // What `run` waited for is done (a server's log synced); a load a stop cut short may
    // still hold a blocking thread, which must not keep the process.
    runtime.shutdown_background();
    match ran {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            report(format_args!("{e:#}"));
            // A refused configuration (protected mode, unusable credentials) exits 2.
            let status = match e.downcast_ref::<photofinish_server::serve::ServeError>() {
                Some(refused) => refused.exit_status(),
                None if e.is::<cli::config::ConfigError>() => 2,
                None => 1,
            };
            std::process::ExitCode::from(status as u8)
        }
    }
}
