//! Lucene-compatible verify server, stress client and orchestrator (being filled in).
