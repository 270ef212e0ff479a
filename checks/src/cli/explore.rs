//! `lockwright explore`: serve Stateright's Explorer for one scenario, on loopback only.

use std::net::{SocketAddr, TcpListener};
use std::process::ExitCode;

use anyhow::{bail, Context};
use stateright::Checker;

use lockwright_model::Family;

use super::check::{FamilyName, ScenarioArgs};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Open the printed URL in a browser: the Explorer lists every property (its discovery, once \
found, links to the path), lets you step through actions (each named like `TryLock(p0, t1)`; \
the step view says what the OS call did), and \"Run to completion\" checks the whole space. \
It serves until interrupted (Ctrl-C). Only loopback addresses are accepted: the Explorer \
has no authentication.")]
pub struct ExploreArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Address to serve on; must be a loopback address.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
}

/// # Errors
/// A non-loopback address, or the address cannot be bound.
pub fn run(args: ExploreArgs) -> anyhow::Result<ExitCode> {
    if !args.addr.ip().is_loopback() {
        bail!(
            "refusing to serve the Explorer on {}: only loopback addresses (127.0.0.1, ::1) are \
             allowed, it has no authentication",
            args.addr
        );
    }
    // Stateright panics if it cannot bind: find out first, with a proper error.
    drop(TcpListener::bind(args.addr).with_context(|| format!("cannot listen on {}", args.addr))?);
    match args.scenario.family {
        FamilyName::File => serve(&args.scenario.file()?, args.addr),
        FamilyName::Zk => serve(&args.scenario.zk()?, args.addr),
        FamilyName::Docstore => serve(&args.scenario.docstore()?, args.addr),
        FamilyName::Replication => serve(&args.scenario.replication()?, args.addr),
        FamilyName::Redis => serve(&args.scenario.redis()?, args.addr),
        FamilyName::Etcd => serve(&args.scenario.etcd()?, args.addr),
    }
}

/// Serves the Explorer for `sc` until the process is interrupted.
fn serve<F: Family>(sc: &F, addr: SocketAddr) -> anyhow::Result<ExitCode> {
    eprintln!("lockwright explore: {}", sc.label());
    eprintln!("Explorer: http://{addr}/ (Ctrl-C to stop)");
    let checker = sc.clone().checker().serve(addr);
    // `serve` answers requests on its own threads; keep the process alive.
    loop {
        std::thread::park();
        let _ = checker.unique_state_count();
    }
}
