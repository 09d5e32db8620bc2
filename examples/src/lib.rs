//! Shared helpers of the example binaries.
