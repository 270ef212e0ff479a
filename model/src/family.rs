//! What the `lockwright` CLI, the report and the Explorer need of a lock family's model,
//! beyond checking it: its name, its property names, a one-line label, its parameters, and
//! who acts in each step. Every family's `Scenario` implements [`Family`].

use std::fmt;
use std::hash::Hash;

use crate::checker::Checkable;

/// A lock family's model, as the tools present it.
pub trait Family:
    Checkable<
        State: Hash + Eq + Clone + fmt::Debug + Send + Sync,
        Action: Copy + fmt::Display + PartialEq + Send + Sync,
    > + Clone
    + fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// The family's command-line name: `file`, `zk`, `docstore`, `replication`.
    const NAME: &'static str;
    /// The `always` properties, in report order (names used verbatim everywhere).
    const ALWAYS: &'static [&'static str];
    /// The `sometimes` properties, in report order.
    const SOMETIMES: &'static [&'static str];

    /// One line naming the scenario (`native × ofd, 2 processes × 2 threads, faults …`).
    fn label(&self) -> String;

    /// The scenario's parameters as a JSON object (`variant`, `faults`, ...; values as the
    /// command line spells them, counts as numbers).
    fn parameters(&self) -> serde_json::Map<String, serde_json::Value>;

    /// Who performs `action`, as JSON fields of a step (`{"process": 0, "thread": 1}`,
    /// `{"client": 2}`; `null` fields for the environment).
    fn actor(action: &Self::Action) -> serde_json::Map<String, serde_json::Value>;

    /// The action's step name without arguments (`"TryLock"`, `"CreateLockNode"`).
    fn step_name(action: &Self::Action) -> String;

    /// Whether `property` can be exercised in this scenario at all (default: every one). The
    /// tools print "n/a" for a `sometimes` property that cannot, instead of a failure; e.g.
    /// "readers share" in a document-store scenario without readers.
    fn applies(&self, property: &str) -> bool {
        let _ = property;
        true
    }

    /// The verdicts this scenario has by design that differ from the default (every `always`
    /// property holds, every `sometimes` property has an example): each `(property, reason)`
    /// names an `always` property violated, or a `sometimes` property never reached, and says
    /// why in one line. `lockwright check` expects exactly these, prints `VIOLATED (as
    /// documented: <reason>)`, and fails if a documented verdict does not come out. Default:
    /// none, so a family that declares nothing is held to "everything holds".
    fn documented(&self) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    /// The `lockwright check` arguments that select this scenario (after `--family NAME`).
    fn check_args(&self) -> String;
}
