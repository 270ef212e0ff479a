//! `lockwright check`: model-check one scenario exhaustively and print every property's
//! verdict, the number of unique states, the time, and each violation's counterexample.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use lockwright_model::checker::{self, describe_path, Report};
use lockwright_model::file::{self, Faults, LockKind, Variant};
use lockwright_model::Family;
use lockwright_model::{docstore, replication, zk};
use serde_json::json;
use stateright::Expectation;

const EXIT_CODES: &str = "\
Scenario: options not given take the standard scenario's values: --variant native --os ofd
--processes 3 --threads 2 --faults crash=2,restart=2,foreign=2 --symmetry on (with --deep:
--processes 4 --faults crash=3,restart=3,unlink=1,replace=1,foreign=2). The checker visits
every reachable state (single thread, breadth first) and reports the first, shortest
counterexample of each violation.

Exit status:
  0  every verdict is as expected: by default every `always` property holds and every
     `sometimes` property has an example; `--expect-violated NAME` expects that `always`
     property to be violated instead, `--expect-not-found NAME` that `sometimes` property to
     have no example
  1  some verdict differs from what was expected (the report says which)
  2  bad arguments or an internal error

Properties (names used verbatim everywhere):
  always    \"at most one writer\", \"at most one valid writer\", \"writes are exclusive\",
            \"no stale lock\"
  sometimes \"writer exists\", \"writer after crash\", \"contention seen\"

Examples:
  lockwright check                                  # the standard scenario
  lockwright check --variant native-4.10 --os posix --expect-violated 'at most one writer' \\
      --expect-violated 'at most one valid writer' --expect-violated 'writes are exclusive'
  lockwright check --variant simple --faults crash=1,restart=1 --json";

/// `on` or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    On,
    Off,
}

impl ScenarioArgs {
    /// `--symmetry` if given, else `default`.
    fn symmetry_or(&self, default: bool) -> bool {
        self.symmetry.map_or(default, |s| s == Switch::On)
    }
}

/// The lock families `--family` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FamilyName {
    /// File locks: held set + OS advisory lock (Lucene's `write.lock`).
    File,
    /// The ZooKeeper mutex: Curator's `InterProcessMutex` and its broken variants.
    Zk,
    /// Document-store locks: the Elasticsearch recipes and a corrected (leased, fenced) one.
    Docstore,
    /// Index replication by generations: copy orders against readers of the replica.
    Replication,
}

impl FamilyName {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            FamilyName::File => "file",
            FamilyName::Zk => "zk",
            FamilyName::Docstore => "docstore",
            FamilyName::Replication => "replication",
        }
    }
}

/// Which family and scenario to check (shared with `lockwright explore`). Every option not
/// given takes its value from the family's standard scenario; options of another family are
/// refused.
#[derive(clap::Args, Debug, Clone)]
pub struct ScenarioArgs {
    /// Lock family.
    #[arg(long, value_enum, default_value = "file")]
    pub family: FamilyName,
    /// Protocol variant. file: native, native-4.10, native-delete-on-release,
    /// native-no-held-set, simple, single-instance, no-lock, mixed. zk: curator,
    /// no-protection, release-forgets, adopt-old-session, delete-by-name-retry. docstore:
    /// global, document, read-write, leased, leased-noop. replication: segments-first,
    /// any-order, seed-rule, lucene-replicator, lockwright.
    #[arg(long)]
    pub variant: Option<String>,
    /// file: OS lock kind of the native variants: flock, posix, ofd, nfs-flock (`mixed` always
    /// uses flock for even pids and posix for odd ones).
    #[arg(long, alias = "kind")]
    pub os: Option<String>,
    /// file: number of processes (1..=8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub processes: Option<u8>,
    /// file: threads per process (1..=8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub threads: Option<u8>,
    /// zk, docstore: number of clients (zk 1..=4, client c0 re-enters; docstore 1..=4).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub clients: Option<u8>,
    /// zk: what a holder does when it learns its session expired: lockwright (reports the
    /// lock lost) or curator (`InterProcessMutex`: keeps believing it holds).
    #[arg(long)]
    pub guard: Option<String>,
    /// docstore `read-write`: how many of the clients are readers. replication: reader
    /// threads on the replica (1..=4).
    #[arg(long)]
    pub readers: Option<u8>,
    /// replication: how readers use files: open-handles, reopen-by-name (NFS-like).
    #[arg(long)]
    pub reader: Option<String>,
    /// replication: keep-up (every reader reopens between two syncs) or unbounded.
    #[arg(long)]
    pub pace: Option<String>,
    /// replication: commits the copier replicates (1..=6).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=6))]
    pub rounds: Option<u8>,
    /// replication: data files per commit (1..=4).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=4))]
    pub data_files: Option<u8>,
    /// docstore `leased`: the lease length in clock ticks (1..=3).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub lease: Option<u8>,
    /// How the protected resource is written. zk: unfenced, check-then-write, fenced,
    /// fenced-by-sequence, guarded. docstore: unfenced, fenced.
    #[arg(long)]
    pub writes: Option<String>,
    /// Fault budgets, or `none`. file: crash, restart, unlink, replace, foreign (e.g.
    /// `crash=2,restart=2,unlink=1,replace=1,foreign=1`). zk: expire, lose-reply,
    /// restart, recreate-parent. docstore: crash, restart, stray-delete, lose-reply, pause,
    /// failover. replication: crash (of the copier).
    #[arg(long)]
    pub faults: Option<String>,
    /// Symmetry reduction: `on` merges states that differ only by renaming interchangeable
    /// parties (processes and threads, clients, readers); `off` explores the full space.
    /// Verdicts and counterexample lengths are the same; counts and the exact paths differ.
    /// Default: the family's standard scenario's setting.
    #[arg(long, value_enum)]
    pub symmetry: Option<Switch>,
    /// Start from the family's deep scenario (what `LOCKWRIGHT_DEEP=1` tests) instead of the
    /// standard one.
    #[arg(long)]
    pub deep: bool,
}

impl ScenarioArgs {
    /// The options given that `family` does not take, by their flag names.
    fn refuse(&self, takes: &[&str]) -> anyhow::Result<()> {
        let given = [
            ("--os", self.os.is_some()),
            ("--processes", self.processes.is_some()),
            ("--threads", self.threads.is_some()),
            ("--clients", self.clients.is_some()),
            ("--readers", self.readers.is_some()),
            ("--lease", self.lease.is_some()),
            ("--writes", self.writes.is_some()),
            ("--guard", self.guard.is_some()),
            ("--reader", self.reader.is_some()),
            ("--pace", self.pace.is_some()),
            ("--rounds", self.rounds.is_some()),
            ("--data-files", self.data_files.is_some()),
        ];
        for (flag, set) in given {
            if set && !takes.contains(&flag) {
                bail!("{flag} does not apply to --family {}", self.family.name());
            }
        }
        Ok(())
    }

    /// The ZooKeeper family's scenario: the standard (or deep) one with the given options
    /// applied.
    ///
    /// # Errors
    /// An unknown variant, write mode, guard or fault, or an option of another family.
    pub fn zk(&self) -> anyhow::Result<zk::Scenario> {
        use zk::{Guard, Variant, WriteMode};
        self.refuse(&["--clients", "--writes", "--guard"])?;
        let mut sc = if self.deep {
            zk::Scenario::deep()
        } else {
            zk::Scenario::standard()
        };
        if let Some(v) = &self.variant {
            sc = sc.with_variant(Variant::from_name(v).ok_or_else(|| {
                let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                anyhow::anyhow!("unknown variant `{v}` (one of: {})", names.join(", "))
            })?);
        }
        if let Some(w) = &self.writes {
            sc = sc.with_writes(WriteMode::from_name(w).ok_or_else(|| {
                let names: Vec<&str> = WriteMode::ALL.iter().map(|w| w.name()).collect();
                anyhow::anyhow!("unknown write mode `{w}` (one of: {})", names.join(", "))
            })?);
        }
        if let Some(g) = &self.guard {
            sc = sc.with_guard(Guard::from_name(g).ok_or_else(|| {
                let names: Vec<&str> = Guard::ALL.iter().map(|g| g.name()).collect();
                anyhow::anyhow!("unknown guard `{g}` (one of: {})", names.join(", "))
            })?);
        }
        if let Some(c) = self.clients {
            sc = sc.with_clients(c);
        }
        if let Some(f) = &self.faults {
            sc = sc.with_faults(zk::Faults::parse(f).map_err(anyhow::Error::msg)?);
        }
        Ok(sc.with_symmetry(self.symmetry_or(sc.symmetry)))
    }

    /// The replication family's scenario: the standard (or deep) one with the given options
    /// applied.
    ///
    /// # Errors
    /// An unknown variant, reader kind, pace or fault, or an option of another family.
    pub fn replication(&self) -> anyhow::Result<replication::Scenario> {
        use replication::{Pace, ReaderKind, Variant};
        self.refuse(&[
            "--readers",
            "--reader",
            "--pace",
            "--rounds",
            "--data-files",
        ])?;
        let mut sc = if self.deep {
            replication::Scenario::deep()
        } else {
            replication::Scenario::standard()
        };
        if let Some(v) = &self.variant {
            let variant = Variant::from_name(v).ok_or_else(|| {
                let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                anyhow::anyhow!("unknown variant `{v}` (one of: {})", names.join(", "))
            })?;
            sc = replication::Scenario { variant, ..sc };
        }
        if let Some(r) = &self.reader {
            sc = sc.with_reader(ReaderKind::from_name(r).ok_or_else(|| {
                let names: Vec<&str> = ReaderKind::ALL.iter().map(|r| r.name()).collect();
                anyhow::anyhow!("unknown reader kind `{r}` (one of: {})", names.join(", "))
            })?);
        }
        if let Some(p) = &self.pace {
            sc = sc.with_pace(Pace::from_name(p).ok_or_else(|| {
                let names: Vec<&str> = Pace::ALL.iter().map(|p| p.name()).collect();
                anyhow::anyhow!("unknown pace `{p}` (one of: {})", names.join(", "))
            })?);
        }
        if let Some(n) = self.readers {
            if !(1..=4).contains(&n) {
                bail!("--readers must be 1..=4 for --family replication");
            }
            sc = sc.with_readers(n);
        }
        if let Some(n) = self.rounds {
            sc = sc.with_rounds(n);
        }
        if let Some(n) = self.data_files {
            sc = sc.with_data_files(n);
        }
        if let Some(f) = &self.faults {
            sc = sc.with_faults(replication::Faults::parse(f).map_err(anyhow::Error::msg)?);
        }
        let symmetry = self.symmetry_or(sc.symmetry);
        Ok(replication::Scenario { symmetry, ..sc })
    }

    /// The document-store family's scenario: the standard (or deep) one with the given
    /// options applied.
    ///
    /// # Errors
    /// An unknown variant, write mode or fault, or an option of another family.
    pub fn docstore(&self) -> anyhow::Result<docstore::Scenario> {
        use docstore::{Variant, Writes};
        self.refuse(&["--clients", "--readers", "--lease", "--writes"])?;
        let base = if self.deep {
            docstore::Scenario::deep()
        } else {
            docstore::Scenario::standard()
        };
        let variant = match &self.variant {
            Some(v) => Variant::from_name(v).ok_or_else(|| {
                let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                anyhow::anyhow!("unknown variant `{v}` (one of: {})", names.join(", "))
            })?,
            None => base.variant,
        };
        let writes = match &self.writes {
            Some(w) => Writes::from_name(w).ok_or_else(|| {
                let names: Vec<&str> = Writes::ALL.iter().map(|w| w.name()).collect();
                anyhow::anyhow!("unknown write mode `{w}` (one of: {})", names.join(", "))
            })?,
            None => base.writes,
        };
        let faults = match &self.faults {
            Some(f) => docstore::Faults::parse(f).map_err(anyhow::Error::msg)?,
            None => base.faults,
        };
        // A different variant starts from its own defaults (clients, readers).
        let mut sc = if variant == base.variant {
            base
        } else {
            docstore::Scenario::new(variant, writes)
        }
        .with_writes(writes)
        .with_faults(faults);
        if let Some(c) = self.clients {
            sc = sc.with_clients(c);
        }
        if let Some(r) = self.readers {
            if variant != Variant::ReadWrite {
                bail!("--readers applies to --variant read-write only");
            }
            sc = sc.with_readers(r);
        }
        if let Some(l) = self.lease {
            sc = sc.with_lease(u64::from(l));
        }
        Ok(sc.with_symmetry(self.symmetry_or(sc.symmetry)))
    }

    /// The file family's scenario: the standard (or deep) one with the given options applied.
    ///
    /// # Errors
    /// An unknown variant, lock kind or fault, or an option of another family.
    pub fn file(&self) -> anyhow::Result<file::Scenario> {
        self.refuse(&["--os", "--processes", "--threads"])?;
        let base = if self.deep {
            file::Scenario::deep()
        } else {
            file::Scenario::standard()
        };
        let variant = match &self.variant {
            Some(v) => Variant::from_name(v).ok_or_else(|| {
                let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                anyhow::anyhow!("unknown variant `{v}` (one of: {})", names.join(", "))
            })?,
            None => base.variant,
        };
        let os = match &self.os {
            Some(k) => LockKind::from_name(k).ok_or_else(|| {
                let names: Vec<&str> = LockKind::ALL.iter().map(|k| k.name()).collect();
                anyhow::anyhow!("unknown lock kind `{k}` (one of: {})", names.join(", "))
            })?,
            None => base.os,
        };
        let faults = match &self.faults {
            Some(f) => Faults::parse(f).map_err(anyhow::Error::msg)?,
            None => base.faults,
        };
        Ok(file::Scenario {
            variant,
            os,
            processes: self.processes.unwrap_or(base.processes),
            threads: self.threads.unwrap_or(base.threads),
            faults,
            symmetry: self.symmetry_or(base.symmetry),
        })
    }
}

#[derive(clap::Args, Debug)]
#[command(after_long_help = EXIT_CODES)]
pub struct CheckArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
    /// Print one JSON object (verdicts, counts, counterexamples) on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also print the example path of each `sometimes` property.
    #[arg(long)]
    pub examples: bool,
    /// An `always` property expected to be VIOLATED (repeatable): exit 0 only if it is.
    #[arg(long, value_name = "NAME")]
    pub expect_violated: Vec<String>,
    /// A `sometimes` property expected to have NO example (repeatable).
    #[arg(long, value_name = "NAME")]
    pub expect_not_found: Vec<String>,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Checks that every name is one of `known` (`kind`: "always" or "sometimes").
fn known_names(names: &[String], known: &[&str], kind: &str) -> anyhow::Result<()> {
    for n in names {
        if !known.contains(&n.as_str()) {
            bail!(
                "`{n}` is not {kind} property of this family (one of: {})",
                known.join(", ")
            );
        }
    }
    Ok(())
}

/// The verdicts that differ from what was expected, as `(property, expected, got)`.
pub fn unexpected<F: Family>(
    report: &Report<F>,
    expect_violated: &[String],
    expect_not_found: &[String],
) -> Vec<(&'static str, &'static str, &'static str)> {
    report
        .verdicts
        .iter()
        .filter_map(|v| {
            if v.expectation == Expectation::Sometimes && !report.model.applies(v.name) {
                return None; // printed as "n/a"
            }
            let expected = match v.expectation {
                Expectation::Sometimes if expect_not_found.iter().any(|n| n == v.name) => {
                    "NOT FOUND"
                }
                Expectation::Always if expect_violated.iter().any(|n| n == v.name) => "VIOLATED",
                _ => "holds",
            };
            (expected != v.word()).then_some((v.name, expected, v.word()))
        })
        .collect()
}

/// # Errors
/// Bad arguments: an unknown variant, fault, option or property name for the family, or a
/// scenario far too large to finish.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    match args.scenario.family {
        FamilyName::File => {
            let sc = args.scenario.file()?;
            if sc.processes as usize * sc.threads as usize > 32 {
                bail!(
                    "{} × {} threads is far beyond what an exhaustive check can finish",
                    sc.processes,
                    sc.threads
                );
            }
            check_family(&sc, &args)
        }
        FamilyName::Zk => check_family(&args.scenario.zk()?, &args),
        FamilyName::Docstore => check_family(&args.scenario.docstore()?, &args),
        FamilyName::Replication => check_family(&args.scenario.replication()?, &args),
    }
}

/// Checks one family's scenario and prints the report.
///
/// # Errors
/// A property name unknown to the family.
pub fn check_family<F: Family>(sc: &F, args: &CheckArgs) -> anyhow::Result<ExitCode> {
    known_names(&args.expect_violated, F::ALWAYS, "an always")?;
    known_names(&args.expect_not_found, F::SOMETIMES, "a sometimes")?;
    let progress = !args.quiet;
    let tty = std::io::stderr().is_terminal();
    if progress {
        eprintln!("lockwright check: {}", sc.label());
    }
    let report = checker::check_with_progress(sc, Duration::from_secs(1), |p| {
        if progress {
            let line = format!(
                "  checking: {} unique states, {} queued, depth {}, {:.0?}",
                p.unique_states, p.queued, p.depth, p.elapsed
            );
            if tty {
                eprint!("\r{line}\x1b[K");
            } else {
                eprintln!("{line}");
            }
            let _ = std::io::stderr().flush();
        }
    });
    if progress && tty {
        eprint!("\r\x1b[K");
    }
    let wrong = unexpected(&report, &args.expect_violated, &args.expect_not_found);
    let code = if wrong.is_empty() { 0 } else { 1 };

    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&to_json(&report, &wrong, code))?
        );
    } else {
        print!("{}", to_text(&report, args.examples, &wrong));
    }
    Ok(ExitCode::from(code))
}

fn step_json<F: Family>(sc: &F, path: &[F::Action]) -> Vec<serde_json::Value> {
    describe_path(sc, path)
        .into_iter()
        .zip(path)
        .enumerate()
        .map(|(i, (text, a))| {
            let text = text
                .split_once(". ")
                .map_or(text.as_str(), |(_, t)| t)
                .to_string();
            let mut step = serde_json::Map::new();
            step.insert("step".into(), json!(i + 1));
            step.insert("action".into(), json!(a.to_string()));
            step.insert("call".into(), json!(F::step_name(a)));
            step.extend(F::actor(a));
            step.insert("description".into(), json!(text));
            serde_json::Value::Object(step)
        })
        .collect()
}

/// The JSON report (`--json`).
pub fn to_json<F: Family>(
    report: &Report<F>,
    wrong: &[(&str, &str, &str)],
    exit_code: u8,
) -> serde_json::Value {
    let sc = &report.model;
    let properties: Vec<_> = report
        .verdicts
        .iter()
        .map(|v| {
            let path = v.path.as_ref().map(|p| step_json(sc, p));
            json!({
                "name": v.name,
                "kind": v.kind(),
                "verdict": v.word(),
                "applies": sc.applies(v.name),
                "holds": v.holds(),
                "path": path,
            })
        })
        .collect();
    let mut scenario = serde_json::Map::new();
    scenario.insert("family".into(), json!(F::NAME));
    scenario.insert("label".into(), json!(sc.label()));
    scenario.extend(sc.parameters());
    json!({
        "scenario": scenario,
        "model_version": lockwright_model::MODEL_VERSION,
        "unique_states": report.unique_states,
        "transitions": report.transitions,
        "max_depth": report.max_depth,
        "seconds": report.elapsed.as_secs_f64(),
        "states_per_second": report.states_per_second().round(),
        "properties": properties,
        "unexpected": wrong.iter().map(|(n, e, g)| json!({"name": n, "expected": e, "got": g})).collect::<Vec<_>>(),
        "exit_code": exit_code,
    })
}

/// The text report.
pub fn to_text<F: Family>(
    report: &Report<F>,
    examples: bool,
    wrong: &[(&str, &str, &str)],
) -> String {
    use std::fmt::Write as _;
    let sc = &report.model;
    let mut out = String::new();
    let _ = writeln!(out, "Scenario: {}", sc.label());
    let width = report
        .verdicts
        .iter()
        .map(|v| v.name.len() + 2)
        .max()
        .unwrap_or(0);
    for v in &report.verdicts {
        let name = format!("\"{}\"", v.name);
        let word = if v.expectation == Expectation::Sometimes && !sc.applies(v.name) {
            "n/a (cannot occur in this scenario)"
        } else {
            v.word()
        };
        let _ = writeln!(out, "  {:<9} {name:<width$}  {word}", v.kind());
    }
    let _ = writeln!(
        out,
        "{} unique states, {} transitions, max depth {}, {:.3} s ({:.0} states/s)",
        report.unique_states,
        report.transitions,
        report.max_depth,
        report.elapsed.as_secs_f64(),
        report.states_per_second()
    );
    for v in &report.verdicts {
        let Some(path) = &v.path else { continue };
        let heading = match v.expectation {
            Expectation::Sometimes if examples => "Example",
            Expectation::Sometimes => continue,
            _ => "Counterexample",
        };
        let _ = writeln!(
            out,
            "\n{heading} for \"{}\" ({} steps):",
            v.name,
            path.len()
        );
        for line in describe_path(sc, path) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if wrong.is_empty() {
        let _ = writeln!(out, "\nAll verdicts as expected.");
    } else {
        let _ = writeln!(out, "\nUnexpected verdicts:");
        for (name, expected, got) in wrong {
            let _ = writeln!(out, "  \"{name}\": expected {expected}, got {got}");
        }
    }
    out
}
