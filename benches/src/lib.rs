//! Hand-written baselines the benchmarks compare against.
