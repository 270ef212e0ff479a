//! `lockwright check`: model-check one scenario exhaustively and print every property's
//! verdict, the number of unique states, the time, and each violation's counterexample. Which
//! scenario: [`super::scenario`].

pub use super::scenario::{FamilyName, ScenarioArgs, Switch};

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use lockwright_model::checker::{self, describe_path, Options, Report};
use lockwright_model::Family;
use serde_json::json;
use stateright::Expectation;

const EXIT_CODES: &str = "\
Scenario: options not given take the family's standard scenario's values; for --family file
(the default): --variant native --os ofd --processes 3 --threads 2
--faults crash=2,restart=2,foreign=2 --symmetry on (with --deep: --processes 4
--faults crash=3,restart=3,unlink=1,replace=1,foreign=2). `lockwright check --family F` prints
F's standard scenario on its first line. The checker visits every reachable state (breadth
first, level by level, on every core) and reports the first, shortest counterexample of each
violation; the result does not depend on --workers.

Exit status:
  0  every verdict is as expected: by default every `always` property holds and every
     `sometimes` property has an example, except the verdicts the scenario documents (printed
     as e.g. `VIOLATED (as documented: a holder whose session ended still believes it
     holds)`: the zk and docstore standard scenarios have one each); `--expect-violated NAME`
     expects that `always` property to be violated instead, `--expect-not-found NAME` that
     `sometimes` property to have no example
  1  some verdict differs from what was expected (the report says which)
  2  bad arguments or an internal error

Properties of --family file (names used verbatim everywhere; each family's are in its docs
page and in the report):
  always    \"at most one writer\", \"at most one valid writer\", \"writes are exclusive\",
            \"no stale lock\"
  sometimes \"writer exists\", \"writer after crash\", \"contention seen\"

Examples:
  lockwright check                                  # the standard scenario
  lockwright check --variant native-4.10 --os posix --expect-violated 'at most one writer' \\
      --expect-violated 'at most one valid writer' --expect-violated 'writes are exclusive'
  lockwright check --variant simple --faults crash=1,restart=1 --json
  lockwright check --family zk --variant adopt-old-session --clients 2
  lockwright check --family docstore --variant global --faults crash=1,restart=1
  lockwright check --family redis --variant redlock --faults clock-jump=1
  lockwright check --engine stateright --symmetry off   # Stateright's own BFS, full space";

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
    /// Which checker explores the space: lockwright (ours: the whole space, shortest
    /// counterexamples, symmetry reduction) or stateright (Stateright 0.31's own
    /// breadth-first checker on the same model, as a second opinion: always the full space,
    /// paths as it found them).
    #[arg(long, value_enum, default_value = "lockwright")]
    pub engine: Engine,
    /// Checker worker threads (default: every core). Results do not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: Option<u16>,
}

/// `--engine`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    Lockwright,
    Stateright,
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

/// What a verdict was expected to be, and why when the scenario documents it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    /// `holds`, `VIOLATED` or `NOT FOUND`.
    pub word: &'static str,
    /// The scenario's one-line reason, when the expectation comes from
    /// [`Family::documented`] rather than from the default or the command line.
    pub documented: Option<&'static str>,
}

/// The expected verdict of `property` (of `kind`): `--expect-violated` / `--expect-not-found`
/// first, then the scenario's documented verdicts, else `holds`.
pub fn expected<F: Family>(
    sc: &F,
    property: &str,
    kind: &Expectation,
    expect_violated: &[String],
    expect_not_found: &[String],
) -> Expected {
    let sometimes = *kind == Expectation::Sometimes;
    let not_default = if sometimes { "NOT FOUND" } else { "VIOLATED" };
    let given = if sometimes {
        expect_not_found
    } else {
        expect_violated
    };
    if given.iter().any(|n| n == property) {
        return Expected {
            word: not_default,
            documented: None,
        };
    }
    match sc.documented().into_iter().find(|(p, _)| *p == property) {
        Some((_, reason)) => Expected {
            word: not_default,
            documented: Some(reason),
        },
        None => Expected {
            word: "holds",
            documented: None,
        },
    }
}

/// The verdicts that differ from what was expected, as `(property, expected, got)`.
pub fn unexpected<F: Family>(
    report: &Report<F>,
    expect_violated: &[String],
    expect_not_found: &[String],
) -> Vec<(&'static str, Expected, &'static str)> {
    report
        .verdicts
        .iter()
        .filter_map(|v| {
            if v.expectation == Expectation::Sometimes
                && !report.model.applies(v.name)
                && !v.holds()
            {
                return None; // printed as "n/a"
            }
            let e = expected(
                &report.model,
                v.name,
                &v.expectation,
                expect_violated,
                expect_not_found,
            );
            (e.word != v.word()).then_some((v.name, e, v.word()))
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
        FamilyName::Redis => check_family(&args.scenario.redis()?, &args),
        FamilyName::Etcd => check_family(&args.scenario.etcd()?, &args),
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
    let threads = args
        .workers
        .map_or_else(Options::default, |n| Options::threads(usize::from(n)));
    if args.engine == Engine::Stateright {
        return stateright_engine(sc, args, threads.threads);
    }
    let report = checker::check_with(sc, threads, Duration::from_secs(1), |p| {
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

/// `--engine stateright`: Stateright's own BFS on the same model, never finishing early, its
/// findings printed in the same shape (transitions are not counted by it).
fn stateright_engine<F: Family>(
    sc: &F,
    args: &CheckArgs,
    threads: usize,
) -> anyhow::Result<ExitCode> {
    use stateright::{Checker, HasDiscoveries};
    if !args.quiet {
        eprintln!(
            "lockwright check: {} — engine stateright, {threads} thread(s), full space",
            sc.label()
        );
    }
    let start = std::time::Instant::now();
    let checker = sc
        .clone()
        .checker()
        .threads(threads)
        .finish_when(HasDiscoveries::AnyOf(std::collections::BTreeSet::new()))
        .spawn_bfs()
        .join();
    let mut discoveries = checker.discoveries();
    let verdicts = sc
        .properties()
        .into_iter()
        .map(|p| lockwright_model::Verdict {
            name: p.name,
            path: discoveries.remove(p.name).map(|d| d.into_actions()),
            expectation: p.expectation,
        })
        .collect();
    let report = Report {
        model: sc.clone(),
        unique_states: checker.unique_state_count(),
        transitions: checker.state_count() as u64,
        max_depth: checker.max_depth(),
        elapsed: start.elapsed(),
        verdicts,
        memory: lockwright_model::checker::Memory::default(),
    };
    let wrong = unexpected(&report, &args.expect_violated, &args.expect_not_found);
    let code = if wrong.is_empty() { 0 } else { 1 };
    if args.json {
        let mut json = to_json(&report, &wrong, code);
        json["engine"] = serde_json::json!("stateright");
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!(
            "Engine: Stateright 0.31 BFS, {threads} thread(s): the full space (no symmetry \
             reduction); its paths are the ones it found, not necessarily the shortest; \
             \"transitions\" counts the states it generated."
        );
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
    wrong: &[(&str, Expected, &str)],
    exit_code: u8,
) -> serde_json::Value {
    let sc = &report.model;
    let documented = sc.documented();
    let properties: Vec<_> = report
        .verdicts
        .iter()
        .map(|v| {
            let path = v.path.as_ref().map(|p| step_json(sc, p));
            let reason = documented.iter().find(|(p, _)| *p == v.name).map(|d| d.1);
            json!({
                "name": v.name,
                "kind": v.kind(),
                "verdict": v.word(),
                "documented": reason,
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
        "unexpected": wrong
            .iter()
            .map(|(n, e, g)| json!({"name": n, "expected": e.word, "documented": e.documented, "got": g}))
            .collect::<Vec<_>>(),
        "exit_code": exit_code,
    })
}

/// The text report.
pub fn to_text<F: Family>(
    report: &Report<F>,
    examples: bool,
    wrong: &[(&str, Expected, &str)],
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
    let documented = sc.documented();
    for v in &report.verdicts {
        let name = format!("\"{}\"", v.name);
        let reason = documented.iter().find(|(p, _)| *p == v.name).map(|d| d.1);
        let word = if v.expectation == Expectation::Sometimes && !sc.applies(v.name) && !v.holds() {
            "n/a (cannot occur in this scenario)".to_owned()
        } else if let (Some(reason), false) = (reason, v.holds()) {
            format!("{} (as documented: {reason})", v.word())
        } else {
            v.word().to_owned()
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
            let why = expected
                .documented
                .map_or_else(String::new, |r| format!(" (documented: {r})"));
            let _ = writeln!(
                out,
                "  \"{name}\": expected {}{why}, got {got}",
                expected.word
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockwright_model::zk;
    use stateright::Model;

    /// A documented violation that does not come out is a verdict that differs: a report of
    /// the zk standard scenario in which nothing was found (no counterexample, no example)
    /// names "at most one holder" as expected VIOLATED with its reason, and every
    /// `sometimes` property as expected holds. A real run cannot produce this report (the
    /// model always finds the second believer), so it is built by hand.
    #[test]
    fn a_documented_violation_that_does_not_happen_is_unexpected() {
        let sc = zk::Scenario::standard();
        let verdicts = sc
            .properties()
            .into_iter()
            .map(|p| lockwright_model::Verdict {
                name: p.name,
                path: None,
                expectation: p.expectation,
            })
            .collect();
        let report = Report {
            model: sc,
            unique_states: 0,
            transitions: 0,
            max_depth: 0,
            elapsed: Duration::ZERO,
            verdicts,
            memory: lockwright_model::checker::Memory::default(),
        };
        let wrong = unexpected(&report, &[], &[]);
        let (name, first, got) = wrong[0];
        assert_eq!(
            (name, first.word, got),
            ("at most one holder", "VIOLATED", "holds")
        );
        assert_eq!(
            first.documented,
            Some("a holder whose session ended still believes it holds")
        );
        assert!(wrong[1..]
            .iter()
            .all(|(_, e, got)| e.word == "holds" && *got == "NOT FOUND"));
        // An explicit expectation is not a documented one.
        let e = expected(
            &report.model,
            "at most one holder",
            &Expectation::Always,
            &["at most one holder".to_owned()],
            &[],
        );
        assert_eq!(e.documented, None);
        let text = to_text(&report, false, &wrong);
        assert!(text.contains(
            "\"at most one holder\": expected VIOLATED (documented: a holder whose session \
             ended still believes it holds), got holds"
        ));
    }
}
