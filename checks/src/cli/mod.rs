//! One module per subcommand of the `lockwright` binary.

pub mod check;
pub mod explore;
pub mod report;
pub mod scenario;
pub mod stress;
pub mod zk;
