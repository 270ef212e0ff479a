//! Curator 5.4's `InterProcessMutex` as a peer process: `checks/peers/java/CuratorPeer.java`,
//! compiled with `javac` against Debian's `curator-recipes.jar` (whose manifest `Class-Path`
//! brings curator-framework, curator-client, zookeeper, guava and slf4j).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// The peer's source, built into the binary so `lockwright zk-bench` needs no checkout.
pub const SOURCE: &str = include_str!("../../peers/java/CuratorPeer.java");
/// Debian's Curator recipes jar.
pub const CURATOR_JAR: &str = "/usr/share/java/curator-recipes.jar";
/// What to install when Curator is missing.
pub const INSTALL_CURATOR: &str = "apt-get install -y --no-install-recommends \
     libcurator-recipes-java libcurator-framework-java libcurator-client-java";
/// What to install when `javac` is missing.
pub const INSTALL_JDK: &str = "apt-get install -y --no-install-recommends openjdk-17-jdk-headless";

/// A compiled Curator peer.
#[derive(Clone, Debug)]
pub struct CuratorPeer {
    classes: PathBuf,
}

impl CuratorPeer {
    /// Compiles the peer into `dir/curator-classes` (skipped when the classes there were built
    /// from the same source).
    ///
    /// # Errors
    /// Missing packages (named) or a compile error.
    pub fn build(dir: &Path) -> anyhow::Result<CuratorPeer> {
        if !Path::new(CURATOR_JAR).is_file() {
            bail!("{CURATOR_JAR} is missing: install Curator 5.4 ({INSTALL_CURATOR})");
        }
        let classes = dir.join("curator-classes");
        let stamp = classes.join("source.stamp");
        let class = classes.join("CuratorPeer.class");
        if class.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == SOURCE) {
            return Ok(CuratorPeer { classes });
        }
        std::fs::create_dir_all(&classes)?;
        let src = classes.join("CuratorPeer.java");
        std::fs::write(&src, SOURCE)?;
        let out = Command::new("javac")
            .args(["-nowarn", "-d"])
            .arg(&classes)
            .args(["-cp", CURATOR_JAR])
            .arg(&src)
            .output()
            .with_context(|| format!("`javac` is missing: install a JDK ({INSTALL_JDK})"))?;
        if !out.status.success() {
            bail!(
                "javac failed on CuratorPeer.java:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::write(&stamp, SOURCE)?;
        Ok(CuratorPeer { classes })
    }

    /// `java -cp classes:curator-recipes.jar CuratorPeer <args>`.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut c = Command::new("java");
        c.args(["-Xmx256m", "-XX:-UsePerfData", "-cp"])
            .arg(format!("{}:{CURATOR_JAR}", self.classes.display()))
            .arg("CuratorPeer")
            .args(args);
        c
    }
}
