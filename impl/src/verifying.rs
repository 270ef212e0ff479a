//! `VerifyingLockFactory`: reports obtain/release to a Lucene-compatible verify server (being filled in).
