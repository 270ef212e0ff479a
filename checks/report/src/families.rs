//! The lock families other than the file family, in the report: each one's curated verdict
//! table, its counterexamples and its JSON, from the same exhaustive checker.
//!
//! A family takes part by implementing [`Presenter`] on its model's `Scenario` (which already
//! implements [`Family`]): which rows to run (the rows of the verdict table of its hand-written
//! page; the results JSON they give is the one pin of the family's verdicts), what its traces call
//! things ([`Words`]), and, for each step of a counterexample, who acts, whether it is a
//! request to the service, the service's view after it, who believes they hold the lock, and
//! why the last state violates the property. Everything else — running the rows, the tables,
//! the trace pages and diagrams, the reproduce commands, the JSON — is here, generic. A new
//! family is one module under `families/` and one line in [`run_all`] and in [`NAMES`].
//!
//! Output, for family `F` (`Family::NAME`): `results-F.md`, `results-F.json` (each violated
//! property with its counterexample's `path`) and, for the counterexamples a hand-written page
//! cites, `traces/F/<id>.md|svg` (all of them on demand: `lockwright-report --traces <dir>`).

pub mod docstore;
pub mod etcd;
pub mod redis;
pub mod replication;
pub mod zk;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Instant;

use lockwright_model::checker::{self, Checkable};
use lockwright_model::{check, Family};
use stateright::Expectation;

use super::render::{counterexamples_table, group_thousands, verdict_cell, HEADER};
use super::trace::{md_esc, Actor, LaneId, Lanes, Step, Trace, Words};
use super::{Finding, PropertyResult, MODEL_VERSION};

/// The command that regenerates the family pages (the same as every generated page's).
pub use super::REGENERATE;

/// What the report needs of a family beyond [`Family`].
pub trait Presenter: Family {
    /// What the model is, for page titles: "the ZooKeeper mutex".
    const TITLE: &'static str;
    /// The family's hand-written page under `docs/` (`zookeeper.md`).
    const PAGE: &'static str;
    /// Headers of the columns that name a row's scenario (before the property columns).
    const ROW_HEADERS: &'static [&'static str];

    /// What the family's traces call things.
    fn words() -> &'static Words;

    /// The curated rows, in the order of the family page's verdict table: the scenarios
    /// whose verdicts, counts and counterexamples `results-<family>.json` pins.
    fn rows() -> Vec<Self>;

    /// The cells under [`Presenter::ROW_HEADERS`] for this scenario (Markdown).
    fn row_cells(&self) -> Vec<String>;

    /// A file-name-safe name of the scenario, unique among the rows
    /// (`curator.fenced.2c.expire1`).
    fn slug(&self) -> String;

    /// The client lanes, in order: `(client, note)`; the note (`reentrant`, `reader`) may be
    /// empty.
    fn clients(&self) -> Vec<(u8, String)>;

    /// The client whose lane `action` is drawn in, or `None` for a step of the environment at
    /// the service (a server step, an operator's delete, a fail-over, the clock).
    fn lane(action: &Self::Action) -> Option<u8>;

    /// Whether a client step is a request to the service (drawn as an arrow).
    fn request(action: &Self::Action) -> bool;

    /// Whether the step is a fault (a lost reply, a crash, a pause; an expiry, a stray
    /// delete): drawn in red. (Every step of the environment is drawn in red.)
    fn fault(action: &Self::Action) -> bool;

    /// The service's view in `s`, in one line.
    fn server_view(&self, s: &Self::State) -> String;

    /// The clients that believe they hold the lock in `s`.
    fn holders(&self, s: &Self::State) -> Vec<u8>;

    /// Why `s` (the last state of a counterexample) violates `property`, in words.
    fn explain(&self, s: &Self::State, property: &str) -> String;

    /// Each step's numbered description ([`Checkable::describe_path`]) with the state after
    /// the step, in the numbering the description uses. The default pairs the descriptions
    /// with the replayed states; a family whose descriptions renumber (zk) overrides it.
    /// `None` if the path does not replay.
    fn described(&self, path: &[Self::Action]) -> Option<Vec<(String, Self::State)>> {
        let states = checker::replay(self, path)?;
        let lines = Checkable::describe_path(self, path)?;
        Some(lines.into_iter().zip(states.into_iter().skip(1)).collect())
    }
}

/// One row: one model-checking run of a curated scenario.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FamilyRun {
    /// The row's number in the family page's verdict table (1-based).
    pub row: usize,
    /// `Family::label`.
    pub scenario: String,
    /// `Family::parameters`.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// The `lockwright check` command that reruns the row and exits 0 exactly when every
    /// verdict is the one reported here.
    pub command: String,
    pub properties: Vec<PropertyResult>,
    pub unique_states: usize,
    pub transitions: u64,
    pub max_depth: usize,
    /// Always true: the report never stops early.
    pub complete: bool,
    /// Wall-clock time of the run (ignored by the staleness check).
    pub time_ms: u64,
    #[serde(skip)]
    pub cells: Vec<String>,
}

impl FamilyRun {
    pub fn property(&self, name: &str) -> Option<&PropertyResult> {
        self.properties.iter().find(|p| p.name == name)
    }
}

/// A property name and its kind (`always`, `sometimes`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct PropertyName {
    pub name: &'static str,
    pub kind: &'static str,
}

/// Everything one family contributes.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FamilyReport {
    /// `Family::NAME`.
    pub family: &'static str,
    pub title: &'static str,
    /// The hand-written page.
    pub page: &'static str,
    pub model_version: String,
    pub generator: String,
    pub checker: String,
    pub properties: Vec<PropertyName>,
    pub runs: Vec<FamilyRun>,
    #[serde(skip)]
    pub row_headers: &'static [&'static str],
    #[serde(skip)]
    pub traces: Vec<Trace>,
}

impl FamilyReport {
    /// `results-<family>.md`.
    pub fn page_name(&self) -> String {
        format!("results-{}.md", self.family)
    }

    /// `results-<family>.json`.
    pub fn json_name(&self) -> String {
        format!("results-{}.json", self.family)
    }

    /// The run of row `row` (1-based).
    pub fn row(&self, row: usize) -> Option<&FamilyRun> {
        self.runs.iter().find(|r| r.row == row)
    }
}

/// The families [`run_all`] runs, by `Family::NAME`: the owners of `results-<name>.*` and
/// `traces/<name>/` ([`compare::owner`](crate::compare::owner)). A new family: one line here
/// and one in [`run_all`].
pub const NAMES: [&str; 5] = [
    <lockwright_model::zk::Scenario as Family>::NAME,
    <lockwright_model::docstore::Scenario as Family>::NAME,
    <lockwright_model::replication::Scenario as Family>::NAME,
    <lockwright_model::redis::Scenario as Family>::NAME,
    <lockwright_model::etcd::Scenario as Family>::NAME,
];

/// Runs every family's rows. A new family: one line here (and one in [`NAMES`]).
///
/// # Errors
/// A counterexample that does not replay (a model bug).
pub fn run_all() -> anyhow::Result<Vec<FamilyReport>> {
    Ok(vec![
        run::<lockwright_model::zk::Scenario>()?,
        run::<lockwright_model::docstore::Scenario>()?,
        run::<lockwright_model::replication::Scenario>()?,
        run::<lockwright_model::redis::Scenario>()?,
        run::<lockwright_model::etcd::Scenario>()?,
    ])
}

/// Runs one family's rows, by `Family::NAME` (`lockwright-report --family NAME`).
///
/// # Errors
/// A name not in [`NAMES`], or a counterexample that does not replay.
pub fn run_one(name: &str) -> anyhow::Result<FamilyReport> {
    use lockwright_model::{docstore, etcd, redis, replication, zk};
    match name {
        n if n == <zk::Scenario as Family>::NAME => run::<zk::Scenario>(),
        n if n == <docstore::Scenario as Family>::NAME => run::<docstore::Scenario>(),
        n if n == <replication::Scenario as Family>::NAME => run::<replication::Scenario>(),
        n if n == <redis::Scenario as Family>::NAME => run::<redis::Scenario>(),
        n if n == <etcd::Scenario as Family>::NAME => run::<etcd::Scenario>(),
        other => anyhow::bail!("no family `{other}` (one of: {})", NAMES.join(", ")),
    }
}

/// `c0`, `c0 and c1`, `c0, c1 and c2`; `nobody`.
pub fn clients_list(cs: &[u8]) -> String {
    let names: Vec<String> = cs.iter().map(|c| format!("c{c}")).collect();
    match names.len() {
        0 => "nobody".to_string(),
        1 => names[0].clone(),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// `expire=1,lose-reply=1` → `expire1-lose-reply1`.
pub fn faults_slug(faults: &str) -> String {
    faults.replace('=', "").replace(',', "-")
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The command that reruns `rep`'s scenario, prints its counterexamples, and exits 0 exactly
/// when every verdict is the one reported.
fn reproduce<P: Presenter>(rep: &lockwright_model::Report<P>) -> String {
    let sc = &rep.model;
    let mut cmd = format!(
        "cargo run -p lockwright-checks -- check --family {} {}",
        P::NAME,
        sc.check_args()
    );
    for v in rep.verdicts.iter().filter(|v| !v.holds()) {
        let flag = match v.expectation {
            // `lockwright check` prints n/a for these and expects nothing of them.
            Expectation::Sometimes if !sc.applies(v.name) => continue,
            Expectation::Sometimes => "--expect-not-found",
            _ => "--expect-violated",
        };
        cmd.push_str(&format!(" \\\n    {flag} '{}'", v.name));
    }
    cmd
}

fn trace_for<P: Presenter>(
    sc: &P,
    config: &str,
    id: String,
    property: &str,
    path: &[P::Action],
    reproduce: String,
) -> anyhow::Result<Trace> {
    let described = sc
        .described(path)
        .ok_or_else(|| anyhow::anyhow!("counterexample for {config} does not replay"))?;
    let steps = path
        .iter()
        .zip(&described)
        .map(|(a, (line, after))| {
            // `3. c1 CreateLockNode: create … → …`: drop the number; the head names who acts.
            let text = line.split_once(". ").map_or(line.as_str(), |(_, t)| t);
            let (head, effect) = text.split_once(": ").unwrap_or((text, ""));
            let who = head.split(' ').next().unwrap_or(head);
            let (actor, call) = match P::lane(a) {
                Some(client) => (Actor::Client { client }, P::request(a)),
                None => (
                    Actor::Environment {
                        who: who.to_string(),
                    },
                    true,
                ),
            };
            Step {
                actor,
                action: a.to_string(),
                os_call: call,
                fault: P::fault(a),
                effect: effect.to_string(),
                kernel: sc.server_view(after),
                holders: sc.holders(after).into_iter().map(LaneId::Client).collect(),
                description: text.to_string(),
            }
        })
        .collect();
    let verdict = match described.last() {
        Some((_, last)) => sc.explain(last, property),
        None => format!("the initial state violates “{property}”"),
    };
    Ok(Trace {
        id,
        config: config.to_string(),
        property: property.to_string(),
        lanes: Lanes::Clients {
            clients: sc.clients(),
        },
        steps,
        verdict,
        also: Vec::new(),
        reproduce,
        words: P::words(),
    })
}

/// Runs one family's rows: the rows of its page and its counterexamples.
///
/// # Errors
/// A counterexample that does not replay (a model bug).
pub fn run<P: Presenter>() -> anyhow::Result<FamilyReport> {
    Ok(run_checked::<P>()?.0)
}

/// [`run`], with the checker's report of every row (in row order): the scenario and every
/// discovery, for the golden test's checks beyond the JSON (`report_fresh.rs`).
///
/// # Errors
/// See [`run`].
pub fn run_checked<P: Presenter>(
) -> anyhow::Result<(FamilyReport, Vec<lockwright_model::Report<P>>)> {
    let mut runs = Vec::new();
    let mut checked = Vec::new();
    // Each trace with the recipe (`variant`) of the row that found it.
    let mut traces: Vec<(Option<serde_json::Value>, Trace)> = Vec::new();
    for (i, sc) in P::rows().into_iter().enumerate() {
        let row = i + 1;
        let started = Instant::now();
        let rep = check(&sc);
        let time_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let config = format!("row {row}, `{}`", sc.label());
        let command = reproduce(&rep);
        let variant = sc.parameters().get("variant").cloned();
        let mut properties = Vec::new();
        for name in P::ALWAYS.iter().chain(P::SOMETIMES.iter()) {
            let v = rep.verdict(name);
            let verdict = match (&v.expectation, v.holds()) {
                (Expectation::Sometimes, true) => Finding::Reached,
                (Expectation::Sometimes, false) if !sc.applies(name) => Finding::NotApplicable,
                (Expectation::Sometimes, false) => Finding::NotReached,
                (_, true) => Finding::Holds,
                (_, false) => Finding::Violated,
            };
            let mut trace = None;
            if verdict == Finding::Violated {
                let path = v.path.as_deref().expect("a violation has a path");
                let id = format!("{}/{}.{}", P::NAME, sc.slug(), slug(name));
                let t = trace_for(&sc, &config, id.clone(), name, path, command.clone())?;
                // Same recipe, property, lanes and steps as an earlier row's: link there.
                let same = traces.iter_mut().find(|(v, u)| {
                    *v == variant
                        && u.property == t.property
                        && u.lanes == t.lanes
                        && u.steps == t.steps
                });
                match same {
                    Some((_, u)) => {
                        u.also.push(config.clone());
                        trace = Some(u.id.clone());
                    }
                    None => {
                        traces.push((variant.clone(), t));
                        trace = Some(id);
                    }
                }
            }
            properties.push(PropertyResult {
                name: (*name).to_string(),
                expectation: v.kind().to_string(),
                verdict,
                trace,
                path_len: v.path.as_ref().map(Vec::len),
                path: (verdict == Finding::Violated)
                    .then(|| v.path.iter().flatten().map(ToString::to_string).collect()),
            });
        }
        runs.push(FamilyRun {
            row,
            scenario: sc.label(),
            parameters: sc.parameters(),
            command,
            properties,
            unique_states: rep.unique_states,
            transitions: rep.transitions,
            max_depth: rep.max_depth,
            complete: true,
            time_ms,
            cells: sc.row_cells(),
        });
        checked.push(rep);
    }
    let report = FamilyReport {
        family: P::NAME,
        title: P::TITLE,
        page: P::PAGE,
        model_version: MODEL_VERSION.to_string(),
        generator: "lockwright report".to_string(),
        checker: super::CHECKER.to_string(),
        properties: P::ALWAYS
            .iter()
            .map(|n| PropertyName {
                name: n,
                kind: "always",
            })
            .chain(P::SOMETIMES.iter().map(|n| PropertyName {
                name: n,
                kind: "sometimes",
            }))
            .collect(),
        runs,
        row_headers: P::ROW_HEADERS,
        traces: traces.into_iter().map(|(_, t)| t).collect(),
    };
    Ok((report, checked))
}

/// `results-<family>.md`; `pages`: the counterexamples whose pages are committed under
/// `traces/<family>/`.
pub fn results_md(f: &FamilyReport, pages: &BTreeSet<String>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Model-checking results: {}\n", f.title);
    let _ = writeln!(s, "{}\n", HEADER);
    let _ = writeln!(
        s,
        "Every verdict, state count and counterexample on this page comes from one run of \
         `{REGENERATE}` on **lockwright model v{}** ({}). `checks/report/tests/report_fresh.rs` \
         regenerates it into a temporary folder and fails if this page, `{}` (ignoring \
         times) or any committed file under `traces/{}/` differs.\n",
        f.model_version,
        f.checker,
        f.json_name(),
        f.family
    );
    let _ = writeln!(
        s,
        "The rows are numbered as in the verdict table of [{page}]({page}), which describes \
         the recipes, the faults and what each property means. `{json}` is the one pin of \
         these verdicts, counts and counterexamples: `report_fresh.rs` compares it with a \
         fresh run and checks every row's discoveries replay and its properties are not \
         vacuous.\n",
        json = f.json_name(),
        page = f.page
    );
    let _ = writeln!(
        s,
        "How to read the table: ✅ is the outcome the property asks for (an `always` property \
         holds in every reachable state; a `sometimes` property is reached in at least one). \
         ❌ links to the shortest counterexample (its path in the section *Counterexamples*, \
         or its numbered steps and sequence diagram where a hand-written page cites it). \
         ⚠️ means a `sometimes` property was never reached although the scenario could \
         exercise it, so the row's `always` verdicts may hold only vacuously, or the row shows \
         that the situation never arises; [{}]({}) says which. – means the scenario cannot \
         exercise the property at all (`Family::applies`: a reader property without readers, \
         a handoff after an expiry without expiry or restart, a recovery without a crash). \
         *Unique states* \
         counts distinct states in the whole state space (with the family's symmetry \
         reduction); *depth* is the longest shortest path from the initial state.\n",
        f.page, f.page
    );
    let _ = writeln!(s, "## Properties\n");
    let _ = writeln!(s, "| property | kind |");
    let _ = writeln!(s, "|---|---|");
    for p in &f.properties {
        let _ = writeln!(s, "| {} | {} |", p.name, p.kind);
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## Verdicts\n");
    let _ = write!(s, "| # |");
    for h in f.row_headers {
        let _ = write!(s, " {h} |");
    }
    for p in &f.properties {
        let _ = write!(s, " {} |", p.name);
    }
    let _ = writeln!(s, " unique states | depth |");
    let _ = write!(s, "|---:|");
    for _ in f.row_headers {
        let _ = write!(s, "---|");
    }
    for _ in &f.properties {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s, "---:|---:|");
    for r in &f.runs {
        let _ = write!(s, "| {} |", r.row);
        for c in &r.cells {
            let _ = write!(s, " {c} |");
        }
        for p in &f.properties {
            let _ = write!(
                s,
                " {} |",
                verdict_cell(r.property(p.name), "– (n/a)", pages)
            );
        }
        let _ = writeln!(
            s,
            " {} | {} |",
            group_thousands(r.unique_states),
            r.max_depth
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## Reproduce a row\n");
    let _ = writeln!(
        s,
        "Each command reruns one row and prints its counterexamples; it exits 0 exactly when \
         every verdict is the one in the table (`--expect-violated`, `--expect-not-found`).\n"
    );
    for r in &f.runs {
        let _ = writeln!(s, "Row {}, {}:\n", r.row, md_esc(&r.scenario));
        let _ = writeln!(s, "```sh\n{}\n```\n", r.command);
    }
    let _ = writeln!(s, "## Counterexamples\n");
    if f.traces.is_empty() {
        let _ = writeln!(s, "None.\n");
    } else {
        let rows = f
            .traces
            .iter()
            .map(|t| {
                let rows: Vec<String> = f
                    .runs
                    .iter()
                    .filter(|r| {
                        r.properties
                            .iter()
                            .any(|p| p.trace.as_deref() == Some(t.id.as_str()))
                    })
                    .map(|r| r.row.to_string())
                    .collect();
                (rows.join(", "), t)
            })
            .collect();
        counterexamples_table(
            &mut s,
            &f.json_name(),
            &format!("traces/{}/", f.family),
            "rows",
            rows,
            pages,
        );
    }
    let total: usize = f.runs.iter().map(|r| r.unique_states).sum();
    let _ = writeln!(
        s,
        "## Totals\n\n{} runs, {} unique states in all. Wall-clock times are in [{json}]({json}) \
         (`time_ms`) only, so that this page is deterministic.",
        f.runs.len(),
        group_thousands(total),
        json = f.json_name()
    );
    s
}

/// `results-<family>.json`: the rows, each violated property with its counterexample's
/// `path` (the action labels, step by step).
///
/// # Errors
/// Serialization errors (none expected).
pub fn results_json(f: &FamilyReport) -> anyhow::Result<String> {
    super::render::to_json(f)
}
