//! The claims the hand-written pages make (`docs/protocol.md`, `docs/incidents.md`,
//! `docs/model.md`, `docs/zookeeper.md`, `docs/docstore.md`, `docs/replication.md`), checked
//! against the model. `report_fresh.rs` keeps
//! the generated pages fresh; this keeps the prose true: if a model change moves one of these
//! verdicts or paths, the page that states it must be revised together with this test.
//!
//! The verdict tables of `zookeeper.md`, `docstore.md` and `replication.md` are compared row
//! by row with the committed `results-zk.json`, `results-docstore.json` and
//! `results-replication.json` (which `report_fresh.rs` keeps equal to what the model gives), so
//! the prose tables cannot drift without a model run here.

use lockwright_model::file::{Faults, LockKind, Scenario, Variant};
use lockwright_model::{check, docstore, etcd, replication, zk, Report};

const AMOW: &str = "at most one writer";
const VALID: &str = "at most one valid writer";
const WRITES: &str = "writes are exclusive";
const STALE: &str = "no stale lock";

const KINDS: [LockKind; 4] = [
    LockKind::Ofd,
    LockKind::Posix,
    LockKind::Flock,
    LockKind::NfsFlock,
];

fn faults(s: &str) -> Faults {
    Faults::parse(s).expect("fault list")
}

/// A row of the verdict grid (`results.md`, `model.md` §5): 2 processes × 2 threads, the
/// full state space, as the pages' counterexamples are drawn.
fn run(v: Variant, k: LockKind, f: &str) -> Report<Scenario> {
    let (processes, threads) = lockwright_report::GRID;
    check(
        &Scenario::new(v, k)
            .with_parties(processes, threads)
            .with_faults(faults(f))
            .with_symmetry(false),
    )
}

fn holds(r: &Report<Scenario>, name: &str) -> bool {
    r.verdict(name).holds()
}

fn path(r: &Report<Scenario>, name: &str) -> Vec<String> {
    r.verdict(name)
        .path
        .as_ref()
        .unwrap_or_else(|| panic!("{}: no counterexample for {name}", r.model.label()))
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// protocol.md §6, incidents.md: `native` holds without faults and never leaves a stale lock;
/// `ofd`/`flock` survive foreign open-close, `posix`/`nfs-flock` do not; unlink and replace give
/// two writers but one valid writer for every kind.
#[test]
fn native_protocol_claims() {
    for k in KINDS {
        let r = run(Variant::Native, k, "none");
        assert!(
            r.violated().is_empty(),
            "native × {k} without faults: {:?}",
            r.violated()
        );
        assert!(
            holds(&r, "writer exists") && holds(&r, "contention seen"),
            "native × {k}"
        );
        for f in ["crash=1,restart=1", "foreign=1", "unlink=1", "replace=1"] {
            let r = run(Variant::Native, k, f);
            assert!(holds(&r, STALE), "native × {k} × {f}: no stale lock");
            match f {
                "foreign=1" => {
                    let safe = matches!(k, LockKind::Ofd | LockKind::Flock);
                    assert_eq!(holds(&r, AMOW), safe, "native × {k} × foreign: {AMOW}");
                    assert_eq!(holds(&r, WRITES), safe, "native × {k} × foreign: {WRITES}");
                    assert_eq!(
                        holds(&r, VALID),
                        k != LockKind::NfsFlock,
                        "native × {k} × foreign: {VALID}"
                    );
                }
                "unlink=1" | "replace=1" => {
                    assert!(!holds(&r, AMOW), "native × {k} × {f}: {AMOW}");
                    assert!(!holds(&r, WRITES), "native × {k} × {f}: {WRITES}");
                    assert!(holds(&r, VALID), "native × {k} × {f}: {VALID}");
                }
                _ => assert!(r.violated().is_empty(), "native × {k} × {f}"),
            }
        }
    }
    // model.md §5 and citing.md: the standard scenario (3 processes × 2 threads, symmetry
    // reduction) holds over 2,096 states; its fault set at 2 × 2 (model.md row 1) over 6,981.
    let sc = Scenario::standard();
    assert_eq!((sc.processes, sc.threads, sc.symmetry), (3, 2, true));
    let std = Golden::find("results.json", "three_processes", &sc.label());
    assert!(
        std.violated().is_empty(),
        "the standard scenario: {:?}",
        std.violated()
    );
    assert_page_states("model.md", std.states());
    assert_page_states("citing.md", std.states());
    let r = run(
        Variant::Native,
        LockKind::Ofd,
        "crash=2,restart=2,foreign=2",
    );
    assert!(r.all_hold(), "native × ofd × standard faults at 2 × 2");
    assert_eq!(
        r.unique_states, 6_981,
        "native × ofd × standard faults at 2 × 2"
    );
    // Two foreign open-closes (one per process) defeat the POSIX probe: two valid writers.
    let r = run(
        Variant::Native,
        LockKind::Posix,
        "crash=2,restart=2,foreign=2",
    );
    assert_eq!(
        path(&r, VALID),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "ForeignOpenClose(p0)",
            "TryLock(p1, t0)",
            "ForeignOpenClose(p1)",
        ]
    );
}

/// incidents.md, LUCENE-5612: every kind, no faults; the path the page narrates.
#[test]
fn lucene_5612_claims() {
    for k in KINDS {
        assert!(
            !holds(&run(Variant::NativeDeleteOnRelease, k, "none"), AMOW),
            "{k}"
        );
    }
    let r = run(Variant::NativeDeleteOnRelease, LockKind::Posix, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "Unlock(p0, t0)",
            "Close(p0, t0)",
            "HeldRemove(p0, t0)",
            "HeldInsert(p0, t1)",
            "Open(p0, t1)",
            "Unlink(p0, t0)",
            "TryLock(p0, t1)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "TryLock(p1, t0)",
        ]
    );
}

/// incidents.md, LUCENE-5738: POSIX and NFS flock break without faults, OFD and flock do not.
#[test]
fn lucene_5738_claims() {
    for k in KINDS {
        let broken = matches!(k, LockKind::Posix | LockKind::NfsFlock);
        let r = run(Variant::NativeNoHeldSet, k, "none");
        assert_eq!(!holds(&r, AMOW), broken, "{k}");
        if !broken {
            assert!(r.violated().is_empty(), "{k}");
        }
    }
    let r = run(Variant::NativeNoHeldSet, LockKind::Posix, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "Open(p0, t1)",
            "TryLock(p0, t1)"
        ]
    );
}

/// incidents.md, LUCENE-6507: POSIX breaks without faults; OFD and flock hold.
#[test]
fn lucene_6507_claims() {
    for k in [LockKind::Ofd, LockKind::Flock] {
        assert!(
            run(Variant::Native410, k, "none").violated().is_empty(),
            "{k}"
        );
    }
    let r = run(Variant::Native410, LockKind::Posix, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "Unlock(p0, t0)",
            "HeldRemove(p0, t0)",
            "HeldInsert(p0, t1)",
            "Open(p0, t1)",
            "TryLock(p0, t1)",
            "Close(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "TryLock(p1, t0)",
        ]
    );
}

/// incidents.md: SimpleFS stale lock after a crash; deleting it gives two writers; mixed kinds
/// give two writers; foreign open-close under POSIX.
#[test]
fn other_incident_claims() {
    let r = run(Variant::Simple, LockKind::Ofd, "crash=1,restart=1");
    assert_eq!(path(&r, STALE), ["CreateExclusive(p0, t0)", "Crash(p0)"]);
    assert!(!holds(
        &run(Variant::Simple, LockKind::Ofd, "unlink=1"),
        AMOW
    ));

    let r = run(Variant::Mixed, LockKind::Ofd, "none");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "TryLock(p1, t0)",
        ]
    );

    let r = run(Variant::Native, LockKind::Posix, "foreign=1");
    assert_eq!(
        path(&r, AMOW),
        [
            "HeldInsert(p0, t0)",
            "Open(p0, t0)",
            "TryLock(p0, t0)",
            "HeldInsert(p1, t0)",
            "Open(p1, t0)",
            "ForeignOpenClose(p0)",
            "TryLock(p1, t0)",
        ]
    );
}

// -------------------------------------------------------------------------------------------
// The golden files: a claim about a row they pin is read from them, not computed again (the
// row is pinned once; `report_fresh` replays it against the model).
// -------------------------------------------------------------------------------------------

/// A row of a committed golden file (`docs/<file>`), found by its scenario label in `section`
/// (`runs`, or `three_processes` of `results.json`).
struct Golden(serde_json::Value);

impl Golden {
    fn find(file: &str, section: &str, label: &str) -> Golden {
        let path = format!("{}/../../docs/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let golden: serde_json::Value =
            serde_json::from_str(&text).expect("the golden file parses");
        let rows: Vec<&serde_json::Value> = golden[section]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: no section {section}"))
            .iter()
            .filter(|r| r["scenario"] == label)
            .collect();
        assert_eq!(rows.len(), 1, "{path} must pin {label} once");
        Golden(rows[0].clone())
    }

    fn states(&self) -> u64 {
        self.0["unique_states"].as_u64().expect("unique_states")
    }

    fn property(&self, name: &str) -> &serde_json::Value {
        self.0["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no property {name:?} in {}", self.0["scenario"]))
    }

    /// The `always` properties violated, in the model's order.
    fn violated(&self) -> Vec<String> {
        self.0["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .filter(|p| p["expectation"] == "always" && p["verdict"] == "violated")
            .map(|p| p["name"].as_str().expect("name").to_string())
            .collect()
    }

    /// An `always` property holds, or a `sometimes` one is reached.
    fn holds(&self, name: &str) -> bool {
        matches!(
            self.property(name)["verdict"].as_str(),
            Some("holds" | "reached")
        )
    }

    fn every_sometimes_reached(&self) -> bool {
        self.0["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .filter(|p| p["expectation"] == "sometimes")
            .all(|p| p["verdict"] == "reached")
    }

    /// The pinned counterexample (or example) of `name`, step by step.
    fn steps(&self, name: &str) -> Vec<String> {
        self.property(name)["path"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no path pinned"))
            .iter()
            .map(|s| s.as_str().expect("a step").to_string())
            .collect()
    }
}

/// The page states `n` (as the pages write it, `396,936`).
fn assert_page_states(page: &str, n: u64) {
    let digits = n.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let path = format!("{}/../../docs/{page}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(
        text.contains(&grouped),
        "{page} must state the golden file's {grouped} states"
    );
}

// -------------------------------------------------------------------------------------------
// The ZooKeeper and document-store pages.
// -------------------------------------------------------------------------------------------

fn steps<A: ToString>(path: &Option<Vec<A>>) -> Vec<String> {
    path.as_ref()
        .expect("a discovery")
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// zookeeper.md §5–§7: the standard scenario (row 1, `curator × fenced-claim`) has 396,936
/// states; Curator's recipe with czxid fencing and claim-at-acquire violates only "at most one
/// holder", by the expiry path §7 narrates (tech note 10), and reaches every `sometimes`
/// property. Rows 3, 4 and 9 (`curator × fenced`, 2 clients, with expiry, no claim) violate "at
/// most one holder" and "no lost update" (§7's lost update); rows 17–18 (`fenced-claim`) only the
/// former; row 2 (no faults) nothing.
#[test]
fn zk_curator_fenced_claims() {
    let expiry = [
        "CreateLockNode(c0)",
        "ListChildren(c0)",
        "CreateLockNode(c1)",
        "ExpireSession(c0)",
        "ListChildren(c1)",
    ];
    let lost_update = [
        "CreateLockNode(c0)",
        "ListChildren(c0)",
        "Read(c0)",
        "CreateLockNode(c1)",
        "ExpireSession(c0)",
        "ListChildren(c1)",
        "Read(c1)",
        "FencedWrite(c0)",
        "FencedWrite(c1)",
    ];
    let std = Golden::find("results-zk.json", "runs", &zk::Scenario::standard().label());
    assert_page_states("zookeeper.md", std.states());
    assert_eq!(std.violated(), ["at most one holder"]);
    assert!(std.every_sometimes_reached());
    assert_eq!(std.steps("at most one holder"), expiry);

    let two = |writes: zk::WriteMode, faults: &str| {
        check(
            &zk::Scenario::new(zk::Variant::Curator, writes)
                .with_clients(2)
                .with_faults(zk::Faults::parse(faults).expect("faults")),
        )
    };
    assert!(
        two(zk::WriteMode::Fenced, "none").violated().is_empty(),
        "row 2"
    );
    for faults in [
        "expire=1",
        "expire=1,lose-reply=1,restart=1",
        "expire=1,lose-reply=1,restart=1,recreate-parent=1",
    ] {
        let r = two(zk::WriteMode::Fenced, faults);
        assert_eq!(
            r.violated(),
            ["at most one holder", "no lost update"],
            "curator × fenced, {faults}"
        );
        assert_eq!(steps(&r.verdict("at most one holder").path), expiry);
        assert_eq!(steps(&r.verdict("no lost update").path), lost_update);
    }
    for faults in [
        "expire=1,lose-reply=1,restart=1",
        "expire=1,lose-reply=1,restart=1,recreate-parent=1",
    ] {
        let r = two(zk::WriteMode::FencedClaim, faults);
        assert_eq!(
            r.violated(),
            ["at most one holder"],
            "curator × fenced-claim, {faults}"
        );
    }
}

/// docstore.md §5–§8: the standard scenario (row 36, `leased × fenced-claim`, the recipe fixed
/// against the store's own faults, with renewals) has 256,907 states and violates only "at most one writer",
/// by the 7-step pause; "readers share" cannot occur without readers; the claimed fence refuses
/// the stale write ("stale write attempted" and "sessions overlap" found, "fenced writes are
/// exclusive" and "no lost update" hold). Without the claim (the same faults) the pause loses
/// an update. The recipe before the fix (`leased-upsert`, row 19) has 66,271 states and the
/// same verdicts.
#[test]
fn docstore_standard_scenario_claims() {
    let sc = docstore::Scenario::standard();
    let golden =
        |sc: &docstore::Scenario| Golden::find("results-docstore.json", "runs", &sc.label());
    let r = golden(&sc);
    assert_page_states("docstore.md", r.states());
    assert_eq!(r.violated(), ["at most one writer"]);
    assert_eq!(
        r.steps("at most one writer"),
        [
            "UpdateLock(c0)",
            "ClaimData(c0)",
            "VerifyLock(c0)",
            "ReadData(c0)",
            "CheckLease(c0)",
            "Pause(c0)",
            "UpdateLock(c1)"
        ]
    );
    assert!(r.holds("no lost update"));
    assert!(r.holds("sessions overlap"));
    let unclaimed = check(&sc.with_writes(docstore::Writes::Fenced));
    assert_eq!(
        unclaimed.violated(),
        ["at most one writer", "no lost update"]
    );
    assert!(!sc.applies("readers share") && !r.holds("readers share"));
    assert!(r.holds("stale write attempted"));
    assert!(r.holds("fenced writes are exclusive"));
    let before = golden(&sc.with_variant(docstore::Variant::LeasedUpsert));
    assert_page_states("docstore.md", before.states());
    assert_eq!(before.violated(), ["at most one writer"]);
}

/// replication.md §5–§6: the standard scenario (row 1, `lockwright × open-handles × keep-up`,
/// a copier crash) has 1,473 states and every property holds: no file a reader uses is ever
/// deleted (the point of the retention rule), while old commits are deleted. Row 8
/// (`lucene-5-handler × open-handles`) violates only "no file in use is deleted": the previous
/// generation's `_0` goes right after the metadata sync that follows the rename of
/// `segments_2`, under readers still searching commit 1, who keep reading it through their open
/// handles.
#[test]
fn replication_claims() {
    use replication::{ReaderKind, Variant, NO_IN_USE_DELETED};
    let std = Golden::find(
        "results-replication.json",
        "runs",
        &replication::Scenario::standard().label(),
    );
    assert_page_states("replication.md", std.states());
    assert!(std.violated().is_empty(), "{:?}", std.violated());
    assert!(std.every_sometimes_reached());

    let r = check(&replication::Scenario::new(
        Variant::Lucene5Handler,
        ReaderKind::OpenHandles,
    ));
    assert_eq!(r.violated(), [NO_IN_USE_DELETED]);
    assert_eq!(
        steps(&r.verdict(NO_IN_USE_DELETED).path),
        [
            "Create(_2)",
            "Fill(_2)",
            "CopyToTemp(segments_2)",
            "Fsync(segments_2)",
            "Rename(segments_2)",
            "SyncDir",
            "Delete(_0)",
        ]
    );
}

/// The rows of a hand-written verdict table: `(row, scenario cells, verdict cells, states)`;
/// the verdict cells are the `properties` columns just before the state count.
fn table_rows(page: &str, properties: usize) -> Vec<(usize, Vec<String>, Vec<String>, usize)> {
    let path = lockwright_report::default_docs_dir().join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<String> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let Some(Ok(row)) = cells.first().map(|c| c.parse::<usize>()) else {
            continue;
        };
        if cells.len() < properties + 2 || !line.starts_with("| ") {
            continue;
        }
        let Ok(states) = cells[cells.len() - 1].replace(',', "").parse::<usize>() else {
            continue;
        };
        let n = cells.len();
        rows.push((
            row,
            cells[1..n - 1 - properties].to_vec(),
            cells[n - 1 - properties..n - 1].to_vec(),
            states,
        ));
    }
    rows
}

/// Every row of the family page's verdict table says what the generated JSON says: the same
/// faults, the same verdict for every property (in the model's order), the same state count.
fn page_table_matches_generated(page: &str, json: &str) {
    let path = lockwright_report::default_docs_dir().join(json);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{json}: {e}"));
    let gen: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let names: Vec<&str> = gen["properties"]
        .as_array()
        .expect("properties")
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    let runs = gen["runs"].as_array().expect("runs");
    let rows = table_rows(page, names.len());
    assert_eq!(
        rows.len(),
        runs.len(),
        "{page} lists {} rows, {json} {}",
        rows.len(),
        runs.len()
    );
    for (row, scenario, verdicts, states) in rows {
        let run = &runs[row - 1];
        assert_eq!(run["row"], row);
        let label = run["scenario"].as_str().expect("label");
        let faults = scenario.last().expect("a faults cell").trim_matches('`');
        assert!(
            label.ends_with(&format!("faults {faults}")),
            "{page} row {row}: faults {faults}, generated {label}"
        );
        assert_eq!(
            run["unique_states"], states,
            "{page} row {row}: unique states"
        );
        for (i, cell) in verdicts.iter().enumerate() {
            let got = run["properties"][i]["verdict"].as_str().expect("verdict");
            assert_eq!(run["properties"][i]["name"], names[i]);
            let want: &[&str] = match cell.as_str() {
                "**VIOLATED**" => &["violated"],
                "holds" => &["holds", "reached"],
                "*not found*" => &["not-reached", "not-applicable"],
                other => panic!("{page} row {row}: unknown cell {other:?}"),
            };
            assert!(
                want.contains(&got),
                "{page} row {row}, {}: the page says {cell}, the model {got}",
                names[i]
            );
        }
    }
}

/// zookeeper.md §6 agrees with `results-zk.json`.
#[test]
fn zookeeper_page_table_is_the_generated_one() {
    page_table_matches_generated("zookeeper.md", "results-zk.json");
}

/// docstore.md §5 agrees with `results-docstore.json`.
#[test]
fn docstore_page_table_is_the_generated_one() {
    page_table_matches_generated("docstore.md", "results-docstore.json");
}

/// replication.md §5 agrees with `results-replication.json`.
#[test]
fn replication_page_table_is_the_generated_one() {
    page_table_matches_generated("replication.md", "results-replication.json");
}

/// etcd.md §5: the standard scenario (row 1 of `results-etcd.json`) is the one `lockwright
/// check --family etcd` runs, every property holds, and the page states its golden count.
#[test]
fn etcd_standard_scenario_claims() {
    let sc = etcd::Scenario::standard();
    let golden = Golden::find("results-etcd.json", "runs", &sc.label());
    assert_page_states("etcd.md", golden.states());
    assert!(lockwright_model::Family::documented(&sc).is_empty());
}
