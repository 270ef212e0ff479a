//! `citing.md`: the model version, the stable property names, and the sentence a design
//! review can quote, filled in per verified configuration. Deterministic, as `render`.

use std::fmt::Write as _;

use super::render::{group_thousands, property_names, HEADER};
use super::runs::NATIVE;
use super::trace::md_esc;
use super::{Finding, Report, RunResult, REGENERATE};

/// The citation sentence for one run and one `always` property that holds.
pub fn cite_sentence(version: &str, scenario: &str, property: &str, states: usize) -> String {
    format!(
        "lockwright model v{version}, scenario {scenario}: '{property}' holds over {} states",
        group_thousands(states)
    )
}

/// Whether `r`'s `sometimes` properties show its `always` verdicts are not vacuous, in words.
fn vacuity(r: &RunResult) -> String {
    let missing: Vec<&str> = r
        .properties
        .iter()
        .filter(|p| p.expectation == "sometimes" && !p.verdict.is_ok())
        .map(|p| p.name.as_str())
        .collect();
    if missing.is_empty() {
        "Every `sometimes` property of this run is reached, so the sentence is not vacuous."
            .to_string()
    } else {
        format!(
            "**Caution:** the `sometimes` properties {} are not reached in this run, so the \
             sentence may hold vacuously.",
            missing.join(", ")
        )
    }
}

pub(super) fn citing_md(report: &Report) -> String {
    let props = property_names(report);
    let mut s = String::new();
    let _ = writeln!(s, "# How to cite lockwright in a design review\n");
    let _ = writeln!(s, "{HEADER}\n");
    let _ = writeln!(
        s,
        "A citation names three things: the **model version**, the **scenario** (variant, OS \
         lock kind, fault set, and sizes), and a **property name**. Property names are stable: \
         the same string is used in the model, the tests, `lockwright check` output and these \
         docs. The model version changes whenever the model's behaviour changes (a different \
         state space, a renamed property); a citation of an older version stays true of that \
         version.\n"
    );
    let _ = writeln!(
        s,
        "Current model version: **v{}** (`lockwright_model::MODEL_VERSION`, bumped by the \
         model's owner whenever a state count, verdict or counterexample changes; \
         `checks/report/tests/report_fresh.rs` makes sure these pages follow).\n",
        report.model_version
    );
    let _ = writeln!(s, "Stable property names:\n");
    for (name, exp) in &props {
        let _ = writeln!(s, "- `{name}` ({exp})");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## The sentence, filled in for the standard scenario\n");
    let std_run = super::runs::standard_run(&report.three_processes);
    match std_run.and_then(|r| r.property("at most one writer").map(|p| (r, p))) {
        Some((r, p)) if p.verdict == Finding::Holds => {
            let scen = super::runs::scenario_name(r);
            let _ = writeln!(
                s,
                "> {}.\n",
                cite_sentence(
                    &report.model_version,
                    &scen,
                    "at most one writer",
                    r.unique_states
                )
            );
            let full = report.three_processes.iter().find(|f| {
                !f.symmetry
                    && (f.variant.as_str(), f.kind.as_str(), f.faults.as_str())
                        == (r.variant.as_str(), r.kind.as_str(), r.faults.as_str())
                    && (f.processes, f.threads) == (r.processes, r.threads)
            });
            let _ = writeln!(
                s,
                "Scenario `{scen}` is the model's standard scenario (`Scenario::standard()`, \
                 what `lockwright check` runs without arguments): the `{}` protocol with `{}` \
                 locks, {} processes × {} threads, every thread looping obtain → \
                 (ensure_valid → write)* → release; the environment may inject {} (`--faults \
                 {}`). {} {} The other `always` properties of this scenario:\n",
                r.variant,
                r.kind,
                r.processes,
                r.threads,
                md_esc(&r.faults_detail),
                r.budgets,
                if r.symmetry {
                    "The checker explores it with symmetry reduction (processes are \
                     interchangeable, and so are the threads inside a process): a state \
                     stands for every state that differs from it only by such a renaming, and \
                     the count is of those classes."
                } else {
                    ""
                },
                vacuity(r)
            );
            for q in r.properties.iter().filter(|q| q.expectation == "always") {
                let _ = writeln!(
                    s,
                    "- {}: {}",
                    q.name,
                    if q.verdict == Finding::Holds {
                        format!(
                            "“{}.”",
                            cite_sentence(&report.model_version, &scen, &q.name, r.unique_states)
                        )
                    } else {
                        format!("**{}** — do not cite it as holding", q.verdict.word())
                    }
                );
            }
            let _ = writeln!(s);
            if let Some(f) = full {
                let holds = f.properties.iter().all(|q| q.verdict.is_ok());
                let _ = writeln!(
                    s,
                    "The same scenario without symmetry reduction (`--symmetry off`) has {} \
                     states, and {}: “{}.”\n",
                    group_thousands(f.unique_states),
                    if holds {
                        "every property has the same verdict"
                    } else {
                        "**its verdicts differ** (report bug)"
                    },
                    cite_sentence(
                        &report.model_version,
                        &super::runs::scenario_name(f),
                        "at most one writer",
                        f.unique_states
                    )
                );
            }
        }
        Some((r, p)) => {
            let _ = writeln!(
                s,
                "In the standard scenario `{}`, 'at most one writer' is **{}**: it cannot be \
                 cited as holding. See [results.md](results.md).\n",
                super::runs::scenario_name(r),
                p.verdict.word()
            );
        }
        None => {
            let _ = writeln!(s, "The standard scenario was not run (report bug).\n");
        }
    }
    let _ = writeln!(s, "## Other scenarios\n");
    let _ = writeln!(
        s,
        "Cite any row of [results.md](results.md) the same way: the scenario name is \
         `<variant>/<lock kind>/<faults>` followed by the row's sizes, the state count is the \
         row's *unique states*. Only cite a property as holding where the row says ✅ holds \
         **and** every `sometimes` property of the row is ✅ reached or – (cannot happen \
         without crashes); a ⚠️ row may hold vacuously. These rows of the native protocol \
         qualify for 'at most one writer':\n"
    );
    let mut any = false;
    for r in report
        .runs
        .iter()
        .chain(&report.three_processes)
        .filter(|r| r.variant == NATIVE)
    {
        let ok = r
            .property("at most one writer")
            .is_some_and(|p| p.verdict == Finding::Holds)
            && r.properties
                .iter()
                .filter(|q| q.expectation == "sometimes")
                .all(|q| q.verdict.is_ok());
        if ok {
            any = true;
            let _ = writeln!(
                s,
                "- “{}.”",
                cite_sentence(
                    &report.model_version,
                    &super::runs::scenario_name(r),
                    "at most one writer",
                    r.unique_states
                )
            );
        }
    }
    if !any {
        let _ = writeln!(s, "- none");
    }
    let _ = writeln!(
        s,
        "\nReproduce any of them with `{REGENERATE}` (all rows) or `lockwright check` (one row)."
    );
    s
}
