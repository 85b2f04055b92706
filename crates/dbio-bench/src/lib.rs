//! dbio workload engine.
