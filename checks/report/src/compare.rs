//! Staleness check: compare freshly generated docs with the committed ones.
//!
//! The fresh docs must be written with the committed docs' citations
//! ([`write_to`](crate::write_to) with [`cited_ids`](crate::cited::cited_ids) of the committed
//! folder; [`stale`](crate::stale) does both), so that both hold the pages of the same traces.
//! What is compared, exactly:
//! - `results.md`, `citing.md`, every family's `results-<family>.md` and every file under
//!   `traces/` (including the family folders `traces/<family>/`): byte for byte;
//! - the set of those files: no missing and no left-over ones (a committed `results-*.md` or
//!   `.json` the report no longer writes counts as left over, and so does a committed trace
//!   that no hand-written page cites);
//! - every trace a hand-written page cites: it must be a counterexample the report finds
//!   (else the link is reported as dangling);
//! - `results.json` and every `results-<family>.json`: as parsed JSON, after removing every
//!   object member named `time_ms` (wall-clock times are the only non-deterministic output;
//!   they appear nowhere else). Each violated property's `path` there pins its
//!   counterexample step by step, committed trace page or not.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;

/// JSON members ignored by the comparison (wall-clock measurements).
pub const VOLATILE_JSON_KEYS: &[&str] = &["time_ms"];

/// The top-level files `lockwright report` writes for the file family (besides `traces/`);
/// each other family adds `results-<family>.md` and `.json`.
pub const TOP_FILES: &[&str] = &["results.md", "results.json", "citing.md"];

/// Whether `name` is a top-level file the report writes (or wrote, if it is left over).
pub fn generated_top_file(name: &str) -> bool {
    TOP_FILES.contains(&name)
        || (name.starts_with("results-") && (name.ends_with(".md") || name.ends_with(".json")))
}

/// The generated top-level files in `dir`, sorted.
fn top_files(dir: &Path) -> io::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    match fs::read_dir(dir) {
        Ok(rd) => {
            for e in rd {
                let e = e?;
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type()?.is_file() && generated_top_file(&name) {
                    out.insert(name);
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    Ok(out)
}

fn strip_volatile(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for k in VOLATILE_JSON_KEYS {
                map.remove(*k);
            }
            for (_, child) in map.iter_mut() {
                strip_volatile(child);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

fn read_opt(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Files under `dir/traces` and its subfolders, as paths relative to it with `/`
/// (`native.ofd.unlink.at-most-one-writer.md`, `zk/<id>.svg`), sorted; empty if the folder
/// is absent.
pub fn trace_files(dir: &Path) -> io::Result<BTreeSet<String>> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeSet<String>) -> io::Result<()> {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for e in rd {
            let e = e?;
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            let kind = e.file_type()?;
            if kind.is_file() {
                out.insert(name);
            } else if kind.is_dir() {
                walk(&e.path(), &format!("{name}/"), out)?;
            }
        }
        Ok(())
    }
    let mut out = BTreeSet::new();
    walk(&dir.join("traces"), "", &mut out)?;
    Ok(out)
}

/// Differences between a fresh generation in `fresh` and the committed docs in `committed`,
/// one line each; empty if the committed docs are up to date.
///
/// # Errors
/// I/O errors other than a missing file (which is reported as a difference).
pub fn differences(fresh: &Path, committed: &Path) -> io::Result<Vec<String>> {
    differences_where(fresh, committed, |_| true)
}

/// The family that owns a generated file, by its path relative to the docs folder:
/// `results-zk.md`, `results-zk.json` and `traces/zk/…` are `zk`'s; `None` for the file
/// family's (and for anything a family not in `families` would own).
pub fn owner<'a>(name: &str, families: &[&'a str]) -> Option<&'a str> {
    families.iter().copied().find(|f| {
        name == format!("results-{f}.md")
            || name == format!("results-{f}.json")
            || name.starts_with(&format!("traces/{f}/"))
    })
}

/// [`differences`] restricted to the files `in_scope` accepts, by path relative to the docs
/// folder (`results-zk.md`, `traces/zk/<id>.svg`; see [`owner`]), and to the citations of
/// traces in scope. The staleness test checks one family at a time with it.
///
/// # Errors
/// See [`differences`].
pub fn differences_where(
    fresh: &Path,
    committed: &Path,
    in_scope: impl Fn(&str) -> bool,
) -> io::Result<Vec<String>> {
    let mut diffs = Vec::new();
    let mut names: BTreeSet<String> = TOP_FILES.iter().map(|n| n.to_string()).collect();
    names.extend(top_files(fresh)?);
    names.extend(top_files(committed)?);
    names.retain(|n| in_scope(n));
    // Report order: the file family's pages first, then the families' in name order.
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort_by_key(|n| (!TOP_FILES.contains(&n.as_str()), n.clone()));
    for name in &names {
        let a = read_opt(&fresh.join(name))?;
        let b = read_opt(&committed.join(name))?;
        match (a, b) {
            (Some(_), None) => diffs.push(format!("{name}: missing")),
            (None, Some(_)) if !TOP_FILES.contains(&name.as_str()) => {
                diffs.push(format!("{name}: no longer generated (delete it)"))
            }
            (None, _) => diffs.push(format!("{name}: not generated (report bug)")),
            (Some(a), Some(b)) if name.ends_with(".json") => {
                let parse = |bytes: &[u8]| serde_json::from_slice::<serde_json::Value>(bytes);
                match (parse(&a), parse(&b)) {
                    (Ok(mut x), Ok(mut y)) => {
                        strip_volatile(&mut x);
                        strip_volatile(&mut y);
                        if let Some(at) = first_json_diff(&x, &y, "") {
                            diffs.push(format!(
                                "{name}: differs (ignoring {VOLATILE_JSON_KEYS:?}) at {at}"
                            ));
                        }
                    }
                    (_, Err(e)) => diffs.push(format!("{name}: not valid JSON: {e}")),
                    (Err(e), _) => diffs.push(format!("{name}: generated invalid JSON: {e}")),
                }
            }
            (Some(a), Some(b)) => {
                if a != b {
                    diffs.push(format!("{name}: differs{}", first_diff_line(&a, &b)));
                }
            }
        }
    }
    let in_traces = |n: &String| in_scope(&format!("traces/{n}"));
    let fa: BTreeSet<String> = trace_files(fresh)?.into_iter().filter(in_traces).collect();
    let fb: BTreeSet<String> = trace_files(committed)?
        .into_iter()
        .filter(in_traces)
        .collect();
    let mut dangling = BTreeSet::new();
    for c in crate::cited::citations(committed)? {
        let page = format!("{}.md", c.id);
        if in_traces(&page) && !fa.contains(&page) && dangling.insert(c.id.clone()) {
            diffs.push(format!(
                "{}: links to {}, but the report finds no counterexample `{}` (fix the link)",
                c.page, c.target, c.id
            ));
        }
    }
    for name in fa.difference(&fb) {
        diffs.push(format!(
            "traces/{name}: missing (a hand-written page cites it)"
        ));
    }
    for name in fb.difference(&fa) {
        diffs.push(format!(
            "traces/{name}: not cited by a hand-written page, or no longer generated (delete \
             it)"
        ));
    }
    for name in fa.intersection(&fb) {
        let a = fs::read(fresh.join("traces").join(name))?;
        let b = fs::read(committed.join("traces").join(name))?;
        if a != b {
            diffs.push(format!("traces/{name}: differs{}", first_diff_line(&a, &b)));
        }
    }
    Ok(diffs)
}

/// Where `fresh` and `committed` first differ, as a path into the JSON with both values:
/// `runs[3].properties[0].path[4]: committed "Open(p1, t0)", fresh "UnlinkLockFile"`. `None`
/// if they are equal.
fn first_json_diff(
    fresh: &serde_json::Value,
    committed: &serde_json::Value,
    at: &str,
) -> Option<String> {
    use serde_json::Value;
    let here = || if at.is_empty() { "the top" } else { at }.to_string();
    match (fresh, committed) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let key = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match b.get(k) {
                    Some(vb) => {
                        if let Some(d) = first_json_diff(va, vb, &key) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{key}: not in the committed file")),
                }
            }
            b.keys().find(|k| !a.contains_key(*k)).map(|k| {
                format!(
                    "{}: no longer generated",
                    if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    }
                )
            })
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                if let Some(d) = first_json_diff(va, vb, &format!("{at}[{i}]")) {
                    return Some(d);
                }
            }
            (a.len() != b.len())
                .then(|| format!("{}: committed {} items, fresh {}", here(), b.len(), a.len()))
        }
        (a, b) if a == b => None,
        (a, b) => Some(format!("{}: committed {b}, fresh {a}", here())),
    }
}

fn first_diff_line(fresh: &[u8], committed: &[u8]) -> String {
    let a = String::from_utf8_lossy(fresh);
    let b = String::from_utf8_lossy(committed);
    let mut la = a.lines();
    let mut lb = b.lines();
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            (None, None) => return String::new(),
            (x, y) => {
                return format!(
                    " at line {n}: committed {:?}, fresh {:?}",
                    y.unwrap_or("<end>"),
                    x.unwrap_or("<end>")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A changed counterexample step is named by where it is in the JSON.
    #[test]
    fn json_differences_say_where() {
        let v = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        let fresh = v(r#"{"runs":[{"properties":[{"path":["A","B"]}]}]}"#);
        assert_eq!(first_json_diff(&fresh, &fresh, ""), None);
        assert_eq!(
            first_json_diff(
                &fresh,
                &v(r#"{"runs":[{"properties":[{"path":["A","C"]}]}]}"#),
                ""
            ),
            Some(r#"runs[0].properties[0].path[1]: committed "C", fresh "B""#.to_string())
        );
        assert_eq!(
            first_json_diff(
                &fresh,
                &v(r#"{"runs":[{"properties":[{"path":["A"]}]}]}"#),
                ""
            ),
            Some("runs[0].properties[0].path: committed 1 items, fresh 2".to_string())
        );
        assert_eq!(
            first_json_diff(&fresh, &v(r#"{"runs":[{"properties":[{}]}]}"#), ""),
            Some("runs[0].properties[0].path: not in the committed file".to_string())
        );
        assert_eq!(
            first_json_diff(&v("{}"), &v(r#"{"traces":[]}"#), ""),
            Some("traces: no longer generated".to_string())
        );
    }

    #[test]
    fn times_are_ignored_but_values_are_not() {
        let ta = tempfile::tempdir().unwrap();
        let tb = tempfile::tempdir().unwrap();
        let (a, b) = (ta.path(), tb.path());
        for d in [a, b] {
            fs::create_dir_all(d.join("traces")).unwrap();
            fs::write(d.join("results.md"), "x\n").unwrap();
            fs::write(d.join("citing.md"), "c\n").unwrap();
            fs::write(d.join("traces/t.svg"), "<svg/>").unwrap();
        }
        fs::write(
            a.join("results.json"),
            r#"{"runs":[{"states":3,"time_ms":5}]}"#,
        )
        .unwrap();
        fs::write(
            b.join("results.json"),
            r#"{"runs":[{"states":3,"time_ms":9}]}"#,
        )
        .unwrap();
        assert_eq!(differences(a, b).unwrap(), Vec::<String>::new());
        fs::write(
            b.join("results.json"),
            r#"{"runs":[{"states":4,"time_ms":9}]}"#,
        )
        .unwrap();
        fs::write(b.join("traces/old.svg"), "<svg/>").unwrap();
        let d = differences(a, b).unwrap();
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(
            d[0],
            r#"results.json: differs (ignoring ["time_ms"]) at runs[0].states: committed 4, fresh 3"#
        );
    }

    #[test]
    fn family_pages_and_trace_folders_are_compared() {
        let ta = tempfile::tempdir().unwrap();
        let tb = tempfile::tempdir().unwrap();
        let (a, b) = (ta.path(), tb.path());
        for d in [a, b] {
            fs::create_dir_all(d.join("traces/zk")).unwrap();
            for f in TOP_FILES {
                fs::write(d.join(f), "{}").unwrap();
            }
            fs::write(d.join("results-zk.md"), "z\n").unwrap();
            fs::write(d.join("traces/zk/t.md"), "t\n").unwrap();
            fs::write(d.join("zookeeper.md"), "hand-written\n").unwrap();
        }
        fs::write(a.join("results-zk.json"), r#"{"runs":[{"time_ms":1}]}"#).unwrap();
        fs::write(b.join("results-zk.json"), r#"{"runs":[{"time_ms":2}]}"#).unwrap();
        fs::write(b.join("zookeeper.md"), "edited by hand\n").unwrap();
        assert_eq!(differences(a, b).unwrap(), Vec::<String>::new());
        fs::write(a.join("traces/zk/new.svg"), "<svg/>").unwrap();
        fs::write(b.join("traces/zk/t.md"), "old\n").unwrap();
        fs::write(b.join("results-gone.md"), "x\n").unwrap();
        let d = differences(a, b).unwrap();
        assert_eq!(
            d,
            [
                "results-gone.md: no longer generated (delete it)",
                "traces/zk/new.svg: missing (a hand-written page cites it)",
                "traces/zk/t.md: differs at line 1: committed \"old\", fresh \"t\"",
            ]
        );
        // One family at a time: only its own files.
        let zk = differences_where(a, b, |n| owner(n, &["zk"]) == Some("zk")).unwrap();
        assert_eq!(zk, d[1..]);
        let file = differences_where(a, b, |n| owner(n, &["zk"]).is_none()).unwrap();
        assert_eq!(file, d[..1]);
    }

    /// A committed trace no page cites is left over; a cited id the report does not produce
    /// is a dangling link.
    #[test]
    fn uncited_traces_are_left_over_and_dangling_citations_are_named() {
        let ta = tempfile::tempdir().unwrap();
        let tb = tempfile::tempdir().unwrap();
        let (a, b) = (ta.path(), tb.path());
        for d in [a, b] {
            fs::create_dir_all(d.join("traces")).unwrap();
            for f in TOP_FILES {
                fs::write(d.join(f), "{}").unwrap();
            }
            fs::write(d.join("traces/cited.md"), "t\n").unwrap();
        }
        fs::write(
            b.join("incidents.md"),
            "[s](traces/cited.md) [gone](traces/renamed.md#x) [again](traces/renamed.svg)\n",
        )
        .unwrap();
        fs::write(b.join("traces/uncited.svg"), "<svg/>").unwrap();
        assert_eq!(
            differences(a, b).unwrap(),
            [
                "incidents.md: links to traces/renamed.md#x, but the report finds no \
                 counterexample `renamed` (fix the link)",
                "traces/uncited.svg: not cited by a hand-written page, or no longer generated \
                 (delete it)",
            ]
        );
    }
}
