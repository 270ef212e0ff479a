//! kazoo 2.8's `Lock` as a peer process: `checks/peers/python/kazoo_peer.py`, run by Debian's
//! `/usr/bin/python3` (the only interpreter that imports Debian's `python3-kazoo`; a pyenv
//! `python3` earlier on `PATH` does not).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

/// The peer's source, built into the binary.
pub const SOURCE: &str = include_str!("../../peers/python/kazoo_peer.py");
/// Debian's interpreter.
pub const PYTHON: &str = "/usr/bin/python3";
/// What to install when kazoo is missing.
pub const INSTALL_KAZOO: &str = "apt-get install -y --no-install-recommends python3-kazoo";

/// A kazoo peer script, ready to run.
#[derive(Clone, Debug)]
pub struct KazooPeer {
    script: PathBuf,
}

impl KazooPeer {
    /// Writes the script into `dir` and checks that kazoo imports.
    ///
    /// # Errors
    /// Missing interpreter or kazoo (naming the package).
    pub fn build(dir: &Path) -> anyhow::Result<KazooPeer> {
        let probe = Command::new(PYTHON)
            .args(["-c", "import kazoo.recipe.lock"])
            .output();
        match probe {
            Ok(o) if o.status.success() => {}
            Ok(o) => bail!(
                "{PYTHON} cannot import kazoo ({}): install it ({INSTALL_KAZOO})",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => bail!("{PYTHON} is missing ({e}): install kazoo ({INSTALL_KAZOO})"),
        }
        let script = dir.join("kazoo_peer.py");
        if std::fs::read_to_string(&script).map_or(true, |s| s != SOURCE) {
            std::fs::create_dir_all(dir)?;
            std::fs::write(&script, SOURCE)?;
        }
        Ok(KazooPeer { script })
    }

    /// `/usr/bin/python3 kazoo_peer.py <args>`; `extra_lock_patterns` sets kazoo's
    /// `extra_lock_patterns` (e.g. `["lock-"]` to see Curator's and lockwright's nodes).
    pub fn command<I, S>(&self, extra_lock_patterns: &[&str], args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut c = Command::new(PYTHON);
        c.arg("-u")
            .arg(&self.script)
            .args(args)
            .env("KAZOO_EXTRA_LOCK_PATTERNS", extra_lock_patterns.join(","));
        c
    }
}
