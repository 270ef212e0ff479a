//! Simulated OS for loom and shuttle, built on the model's OS semantics (being filled in).
