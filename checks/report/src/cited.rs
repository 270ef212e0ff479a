//! The counterexamples the hand-written pages cite: the only ones `docs/traces/` keeps.
//!
//! Every counterexample's action path is pinned in the results JSON (`path` of each violated
//! property); a page of numbered steps and a sequence diagram is committed only for the ones a
//! person links to. A *hand-written page* is every `.md` file directly in the docs folder that
//! the report does not write (not `results*.md`, not `citing.md`). A *citation* is a Markdown
//! link or image in such a page whose target is a trace's page or diagram under `traces/`
//! (`traces/<id>.md`, `traces/zk/<id>.svg`, with or without a `#fragment`). A cited trace is
//! committed whole, page and diagram (the page shows the diagram). Every trace, cited or not,
//! is written on demand by `lockwright-report --traces <dir>`.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::Path;

/// One link from a hand-written page to a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    /// The page that links (`incidents.md`).
    pub page: String,
    /// The link's target as written (`traces/simple.none.crash.no-stale-lock.md`).
    pub target: String,
    /// The trace's id: its path under `traces/` without the extension (`zk/<stem>` for a
    /// family's).
    pub id: String,
}

/// The hand-written pages in `docs`: every `.md` file directly in it that the report does not
/// generate, sorted by name. Empty if the folder does not exist.
///
/// # Errors
/// I/O errors other than a missing folder.
pub fn hand_written_pages(docs: &Path) -> io::Result<Vec<String>> {
    let rd = match fs::read_dir(docs) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut pages = Vec::new();
    for e in rd {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type()?.is_file()
            && name.ends_with(".md")
            && !super::compare::generated_top_file(&name)
        {
            pages.push(name);
        }
    }
    pages.sort();
    Ok(pages)
}

/// Targets of the Markdown links and images (`[text](target)`, `![alt](target)`) in `text`,
/// in order.
pub fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(j) = rest.find(')') {
            out.push(rest[..j].to_string());
            rest = &rest[j..];
        }
    }
    out
}

/// The trace id a link target names, if it names a trace's page or diagram:
/// `traces/zk/a.b.md#x` → `zk/a.b`.
pub fn trace_id(target: &str) -> Option<&str> {
    let file = target.split('#').next().unwrap_or_default();
    let rel = file.strip_prefix("traces/")?;
    rel.strip_suffix(".md")
        .or_else(|| rel.strip_suffix(".svg"))
        .filter(|id| !id.is_empty())
}

/// Every citation of a trace in the hand-written pages of `docs`, page by page in name order.
///
/// # Errors
/// A page that cannot be read.
pub fn citations(docs: &Path) -> io::Result<Vec<Citation>> {
    let mut out = Vec::new();
    for page in hand_written_pages(docs)? {
        let text = fs::read_to_string(docs.join(&page))?;
        for target in links(&text) {
            if let Some(id) = trace_id(&target) {
                out.push(Citation {
                    page: page.clone(),
                    id: id.to_string(),
                    target,
                });
            }
        }
    }
    Ok(out)
}

/// The ids of the traces the hand-written pages of `docs` cite.
///
/// # Errors
/// See [`citations`].
pub fn cited_ids(docs: &Path) -> io::Result<BTreeSet<String>> {
    Ok(citations(docs)?.into_iter().map(|c| c.id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_trace_ids() {
        let text = "See [steps](traces/a.b.md), ![d](traces/zk/c-d.svg) and \
                    [x](traces/a.b.md#step-3); not [folder](traces/), [p](protocol.md) or \
                    [n](notes/traces/e.md).";
        let targets = links(text);
        let ids: Vec<&str> = targets.iter().filter_map(|t| trace_id(t)).collect();
        assert_eq!(ids, ["a.b", "zk/c-d", "a.b"]);
    }

    #[test]
    fn only_hand_written_pages_cite() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(
            d.join("incidents.md"),
            "[t](traces/x.md) ![t](traces/zk/y.svg)\n",
        )
        .unwrap();
        fs::write(d.join("results.md"), "[t](traces/generated-only.md)\n").unwrap();
        fs::write(
            d.join("results-zk.md"),
            "[t](traces/zk/generated-only.md)\n",
        )
        .unwrap();
        fs::write(d.join("citing.md"), "[t](traces/generated-only.md)\n").unwrap();
        fs::write(d.join("notes.txt"), "[t](traces/not-a-page.md)\n").unwrap();
        assert_eq!(hand_written_pages(d).unwrap(), ["incidents.md"]);
        let ids: Vec<String> = cited_ids(d).unwrap().into_iter().collect();
        assert_eq!(ids, ["x", "zk/y"]);
        assert_eq!(
            citations(d).unwrap()[1],
            Citation {
                page: "incidents.md".into(),
                target: "traces/zk/y.svg".into(),
                id: "zk/y".into(),
            }
        );
    }
}
